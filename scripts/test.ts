// The test runner behind `npm test` and `npm run test:all` (the tiers of test/projects.ts).
//
//   npm test                      the quick tier: Biome, the type checks, then the lib and worker
//                                 projects with property tests at 200 cases (FUZZ_RUNS)
//   npm run test:all              the full tier, what CI runs: every check (knip, the package's
//                                 publint and attw, the deploy check) and every project, with
//                                 property tests at 10,000 cases
//   npm test -- <file|filter>...  only what vitest selects with those arguments, in whichever
//                                 project holds it, without the static checks (options alone,
//                                 such as a reporter, keep the tier's projects)
//
// The full tier packs the package once and hands the tarball to publint, attw and the package
// project (EDGEPAY_PACKED names its description). Each step's time is printed at the end.
// Runs on Node 22's type stripping.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { type CheckName, fuzzRuns, TIERS, type Tier } from '../test/projects.ts';
import { packPackage } from '../test/support/package-consumer.ts';

/** A step's outcome: its name, whether it passed, and its wall time in seconds. */
interface StepTime {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
}

const times: StepTime[] = [];

/** Runs one command with the terminal attached; records and returns whether it passed. */
function step(
  name: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): boolean {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  const ok = result.status === 0;
  times.push({ name, ok, seconds: (performance.now() - started) / 1000 });
  if (!ok)
    console.error(
      `test: ${name} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`,
    );
  return ok;
}

/** The package check: one `npm pack` (which builds dist/), publint and attw on that tarball. */
function checkPackage(scratch: string): { ok: boolean; env: NodeJS.ProcessEnv } {
  const started = performance.now();
  const packed = packPackage(scratch);
  times.push({ name: 'npm pack', ok: true, seconds: (performance.now() - started) / 1000 });
  const description = join(scratch, 'packed.json');
  writeFileSync(description, JSON.stringify(packed));
  const ok =
    step('publint', 'publint', ['run', packed.path, '--strict']) &&
    step('attw', 'attw', [packed.path, '--profile', 'esm-only']);
  return { ok, env: { EDGEPAY_PACKED: description } };
}

/** Each static check's command (the package check packs, so it is apart). */
const CHECKS: Record<Exclude<CheckName, 'package'>, readonly [string, readonly string[]]> = {
  biome: ['biome', ['check', '.']],
  typecheck: ['npm', ['run', '--silent', 'typecheck']],
  knip: ['npm', ['run', '--silent', 'knip']],
  deploy: ['npm', ['run', '--silent', 'deploy:check']],
};

function printTimes(): void {
  const width = Math.max(...times.map((time) => time.name.length));
  console.log('\ntest: time by step');
  for (const time of times) {
    console.log(
      `  ${time.name.padEnd(width)}  ${time.seconds.toFixed(1).padStart(7)} s${time.ok ? '' : '  FAILED'}`,
    );
  }
  const total = times.reduce((sum, time) => sum + time.seconds, 0);
  console.log(`  ${'total'.padEnd(width)}  ${total.toFixed(1).padStart(7)} s`);
}

/** `--project` arguments selecting a tier's projects. */
function projectArgs(tier: Tier): string[] {
  return tier.projects.flatMap((name) => ['--project', name]);
}

function runTier(tier: Tier): boolean {
  const runs = String(fuzzRuns(process.env.FUZZ_RUNS, tier.fuzzRuns));
  const scratch = mkdtempSync(join(tmpdir(), 'edgepay-test-'));
  try {
    let vitestEnv: NodeJS.ProcessEnv = { FUZZ_RUNS: runs };
    for (const check of tier.checks) {
      if (check === 'package') {
        const packed = checkPackage(scratch);
        if (!packed.ok) return false;
        vitestEnv = { ...vitestEnv, ...packed.env };
        continue;
      }
      const [command, args] = CHECKS[check];
      if (!step(check, command, args)) return false;
    }
    return step(
      `vitest (${tier.projects.join(', ')}; FUZZ_RUNS=${runs})`,
      'vitest',
      ['run', ...projectArgs(tier)],
      vitestEnv,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const tier = TIERS[args.includes('--all') ? 'all' : 'quick'];
const passthrough = args.filter((arg) => arg !== '--all');

let ok: boolean;
if (passthrough.length > 0) {
  // Files or folders named (or --project): whichever projects hold them. Only options (a
  // reporter, -t): the tier's projects.
  const named = passthrough.some((arg) => !arg.startsWith('-') || arg.startsWith('--project'));
  const projects = named ? [] : projectArgs(tier);
  ok = step(`vitest ${passthrough.join(' ')}`, 'vitest', ['run', ...projects, ...passthrough], {
    FUZZ_RUNS: String(fuzzRuns(process.env.FUZZ_RUNS, tier.fuzzRuns)),
  });
} else {
  ok = runTier(tier);
}
printTimes();
process.exitCode = ok ? 0 : 1;
