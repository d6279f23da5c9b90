/**
 * The test suite's projects (which files each holds) and its two tiers (which projects and
 * which static checks each runs). vitest.config.ts builds its projects from this table, the
 * test runner (scripts/test.ts) picks a tier from it, and test/scripts/test-tiers.test.ts
 * holds it to every test file in the repository. The README's
 * Contributing section says when to run which tier.
 */

/** A vitest project's files, as globs from the repository root, and how many run at once. */
export interface ProjectFiles {
  readonly include: readonly string[];
  readonly exclude?: readonly string[];
  /**
   * Files of this project run at the same time. vitest's default on two cores is one; most
   * files here wait on sockets and timers rather than the CPU, so more overlap well.
   * Projects with different counts run one after the other.
   */
  readonly workers: number;
}

/**
 * Files at once for the Node and workerd unit tests: with a workerd per file, the worker
 * project took 470 s one at a time and 246 s three at a time on two cores.
 */
const UNIT_WORKERS = 3;

/**
 * Node tests that run another runtime or a third-party tool (deno, bun, typedoc, redocly,
 * wrangler's build and its configuration reader): seconds each, so they wait for the full tier.
 */
const TOOL_FILES = [
  'test/runtimes/**/*.test.ts',
  'test/lib/jsr.test.ts',
  'test/scripts/api-reference.test.ts',
  'test/scripts/openapi-lint.test.ts',
  'test/scripts/deploy-doc.test.ts',
  'test/scripts/wrangler-config.test.ts',
  'test/scripts/wrangler-defaults.test.ts',
] as const;

/** Every project of the suite, by the name vitest reports it under. */
export const PROJECTS = {
  /** The SDK, the sandbox, the CLI, the console's client code and the documents kept in step, under Node. */
  lib: {
    include: [
      'test/lib/**/*.test.ts',
      'test/cli/**/*.test.ts',
      'test/console/**/*.test.ts',
      'test/scripts/**/*.test.ts',
    ],
    exclude: TOOL_FILES,
    workers: UNIT_WORKERS,
  },
  /** The gateway inside workerd, with real D1, KV and Queues. */
  worker: { include: ['test/worker/**/*.test.ts'], workers: UNIT_WORKERS },
  /** Node tests that drive another runtime or tool (see TOOL_FILES). */
  tools: { include: TOOL_FILES, workers: UNIT_WORKERS },
  /** The packed tarball installed into fresh consumer projects, in every runtime. */
  package: { include: ['test/package/**/*.test.ts'], workers: 1 },
  /** The `npm start` stack over HTTP, and the console in a real Chromium. */
  e2e: { include: ['test/e2e/**/*.test.ts'], workers: 2 },
} as const satisfies Record<string, ProjectFiles>;

/** A project's name. */
export type ProjectName = keyof typeof PROJECTS;

/** A static check the runner can run before vitest (scripts/test.ts says what each runs). */
export type CheckName = 'biome' | 'typecheck' | 'knip' | 'package' | 'deploy';

/** One tier: its static checks, its projects, and its default count of property-test cases. */
export interface Tier {
  readonly checks: readonly CheckName[];
  readonly projects: readonly ProjectName[];
  /** `FUZZ_RUNS` when the environment does not set it. */
  readonly fuzzRuns: number;
}

/**
 * The tiers. `quick` is `npm test`, the everyday loop (under five minutes on two cores);
 * `all` is `npm run test:all`, what CI runs: everything quick runs, and more.
 */
export const TIERS = {
  quick: {
    checks: ['biome', 'typecheck'],
    projects: ['lib', 'worker'],
    fuzzRuns: 200,
  },
  all: {
    checks: ['biome', 'typecheck', 'knip', 'package', 'deploy'],
    projects: ['lib', 'worker', 'tools', 'package', 'e2e'],
    fuzzRuns: 10_000,
  },
} as const satisfies Record<string, Tier>;

/**
 * Property-test cases: `value` (`FUZZ_RUNS`) when it is a count, else `fallback`.
 *
 * @param fallback - the cases when `value` is unset or not a count; the quick tier's by default.
 */
export function fuzzRuns(
  value: string | undefined = process.env.FUZZ_RUNS,
  fallback: number = TIERS.quick.fuzzRuns,
): number {
  return value !== undefined && /^\d{1,7}$/.test(value) ? Number(value) : fallback;
}
