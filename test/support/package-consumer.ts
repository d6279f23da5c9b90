// The package as a new user gets it: `npm pack`, then a fresh project that installs the
// tarball. Shared by the package tests (test/package/) and `npm run bench -- package`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import ts from 'typescript';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'package', 'fixtures');

/** What the consumer program (test/package/fixtures/walk.ts) must observe in every runtime. */
export const EXPECTED_WALK = {
  initialized: true,
  status: 'success',
  amount: 2500,
  webhook: 'charge_success',
  webhookReference: true,
} as const;

/** Compatibility date of the consumer Workers (the gateway's, wrangler.toml). */
const COMPATIBILITY_DATE = '2026-10-23';

/** The outcome of {@link run}. */
export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion with the project's Node 22 and binaries first on PATH.
 *
 * @param env - variables added to the environment.
 * @param timeoutMs - killed after this many milliseconds. @default 60_000
 */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): RunResult {
  const path = [dirname(process.execPath), join(ROOT, 'node_modules', '.bin'), process.env.PATH];
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, PATH: path.join(':'), NO_COLOR: '1', FORCE_COLOR: '0', ...env },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs a command and returns its stdout; throws with its output when it exits non-zero. */
function runOk(command: string, args: string[], cwd: string, env?: Record<string, string>) {
  const result = run(command, args, cwd, env);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** The last line of a program's output, parsed as JSON. */
export function lastJsonLine(stdout: string): unknown {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
}

/** One packed tarball, as `npm pack --json` describes it. */
export interface PackedTarball {
  path: string;
  /** Number of files in the tarball. */
  entryCount: number;
  /** Sum of the file sizes, in bytes. */
  unpackedSize: number;
  /** Size of the .tgz, in bytes. */
  size: number;
  files: string[];
}

function pack(source: string, destination: string, extra: string[] = []): PackedTarball {
  const stdout = runOk(
    'npm',
    ['pack', source, '--json', '--pack-destination', destination, ...extra],
    ROOT,
  );
  // Lifecycle scripts (prepack builds dist/) may print before the JSON.
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
    filename: string;
    entryCount: number;
    unpackedSize: number;
    size: number;
    files: Array<{ path: string }>;
  }>;
  if (info === undefined) throw new Error(`npm pack ${source} described no tarball`);
  return {
    path: join(destination, info.filename),
    entryCount: info.entryCount,
    unpackedSize: info.unpackedSize,
    size: info.size,
    files: info.files.map((file) => file.path),
  };
}

/**
 * Packs the repository with `npm pack` (its `prepack` script builds dist/ first).
 *
 * @param destination - directory the .tgz is written to.
 * @returns the tarball's path, file list and sizes.
 */
export function packPackage(destination: string): PackedTarball {
  return pack('.', destination);
}

/**
 * Creates the project a new user starts from, `npm init -y` (CommonJS by default), in
 * `dir`, and installs the tarball there as {@link createConsumer} does.
 *
 * @returns `dir`.
 */
export function createScratchProject(dir: string, tarball: string): string {
  mkdirSync(dir, { recursive: true });
  runOk('npm', ['init', '-y'], dir);
  installTarball(dir, tarball);
  return dir;
}

/**
 * Installs the tarball into the project in `dir`, offline; its one dependency, valibot,
 * from the copy `npm ci` put in node_modules (see {@link createConsumer}).
 */
function installTarball(dir: string, tarball: string): void {
  const valibot = pack(join(ROOT, 'node_modules', 'valibot'), dir, ['--ignore-scripts']);
  runOk('npm', ['install', tarball, valibot.path, '--offline', '--no-audit', '--no-fund'], dir);
}

/**
 * Creates a fresh consumer project in `dir` and installs the tarball there with npm,
 * offline. Its one dependency, valibot, is installed from the copy `npm ci` put in
 * node_modules (packed, scripts ignored): `npm install --offline` cannot resolve a range
 * from the cache `npm ci` fills, which holds tarballs but no registry metadata.
 * TypeScript's type packages (`@types/node`, `@cloudflare/workers-types`) are linked
 * from the repository rather than installed. Then the consumer program is copied in,
 * with its ESM (`walk.mjs`) and CommonJS (`walk.cjs`) transpilations.
 *
 * @returns `dir`.
 */
export function createConsumer(dir: string, tarball: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'edgepay-consumer', private: true, type: 'module' }, null, 2)}\n`,
  );
  installTarball(dir, tarball);
  for (const typesPackage of ['@types/node', '@cloudflare/workers-types']) {
    const target = join(dir, 'node_modules', typesPackage);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', typesPackage), target, 'dir');
  }
  for (const file of [
    'walk.ts',
    'worker.ts',
    'size-client.ts',
    'size-webhook.ts',
    'size-verify.ts',
  ]) {
    copyFileSync(join(FIXTURES, file), join(dir, file));
  }
  const source = readFileSync(join(FIXTURES, 'walk.ts'), 'utf8');
  const transpile = (module: ts.ModuleKind) =>
    ts.transpileModule(source, {
      compilerOptions: { module, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: false },
    }).outputText;
  writeFileSync(join(dir, 'walk.mjs'), transpile(ts.ModuleKind.ESNext));
  writeFileSync(join(dir, 'walk.cjs'), transpile(ts.ModuleKind.CommonJS));
  const expected = JSON.stringify(EXPECTED_WALK);
  const files: Record<string, string> = {
    // Bun and Deno run the TypeScript program itself.
    'run.ts': "import { walk } from './walk.ts';\n\nconsole.log(JSON.stringify(await walk()));\n",
    'walk.vitest.test.ts': [
      "import { walk } from './walk.ts';",
      '',
      "test('walks under vitest', async () => {",
      `  expect(await walk()).toEqual(${expected});`,
      '});',
      '',
    ].join('\n'),
    // Plain object, no imports: vitest is not installed in the consumer project.
    'vitest.config.mjs':
      "export default { test: { globals: true, include: ['walk.vitest.test.ts'] } };\n",
    'walk.jest.test.mjs': [
      "import { walk } from './walk.mjs';",
      '',
      "test('walks under Jest', async () => {",
      `  expect(await walk()).toEqual(${expected});`,
      '});',
      '',
    ].join('\n'),
    'jest.config.json': `${JSON.stringify({ testEnvironment: 'node', transform: {}, testMatch: ['<rootDir>/walk.jest.test.mjs'] })}\n`,
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

/** A Worker bundled as `wrangler deploy --dry-run --minify --outdir` does it. */
export interface WorkerBundle {
  /** The bundled module's text. */
  code: string;
  /** Its size in bytes. */
  minified: number;
  /** Its size gzip -9, in bytes. */
  gzipped: number;
}

/**
 * Bundles a Worker of the consumer project with the repository's wrangler, minified,
 * without deploying it.
 *
 * @param dir - the consumer project.
 * @param entry - the Worker's entry module, relative to `dir`.
 * @param keepNames - wrangler's `keep_names` (on by default: it keeps `Function.name`
 *   through minification at some cost in size).
 */
export function bundleWorker(dir: string, entry: string, keepNames = true): WorkerBundle {
  const name = `${entry.replace(/\.ts$/, '')}${keepNames ? '' : '-no-keep-names'}`;
  const project = join(dir, 'workers', name);
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, 'wrangler.toml'),
    [
      `name = "${name}"`,
      `main = "../../${entry}"`,
      `compatibility_date = "${COMPATIBILITY_DATE}"`,
      `keep_names = ${keepNames}`,
      '',
    ].join('\n'),
  );
  runOk('wrangler', ['deploy', '--dry-run', '--minify', '--outdir', 'out'], project, {
    WRANGLER_SEND_METRICS: 'false',
  });
  const code = readFileSync(join(project, 'out', entry.replace(/\.ts$/, '.js')), 'utf8');
  const bytes = Buffer.from(code);
  return { code, minified: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
}
