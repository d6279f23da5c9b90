// What the wrangler dev benchmarks start: Workers under `wrangler dev`, their D1
// migrations, and the sandbox emulator as their upstream. Each is stopped when the run
// ends (bench/lifecycle.ts).
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxServer, startSandboxServer } from '../cli/sandbox-server.ts';
import { HOST, onCleanup, spawnGroup, tempState } from './lifecycle.ts';

/** The repository root. */
export const root = join(import.meta.dirname, '..');

const wrangler = join(root, 'node_modules', '.bin', 'wrangler');
// No prompts, no telemetry, no update checks: the machine may have no network.
const quiet = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  NO_UPDATE_NOTIFIER: '1',
  CI: 'true',
  // wrangler also appends every line it prints to a debug log under ~/.wrangler/logs
  // (a mutex and a file append per line); the benchmark keeps its own copy of the output.
  WRANGLER_WRITE_LOGS: 'false',
};

/** Where a Worker under `wrangler dev` listens: its HTTP port and its DevTools inspector port. */
export interface WorkerPorts {
  port: number;
  inspectorPort: number;
}

/**
 * Starts `wrangler dev` with local state in `state`, resolving once it answers HTTP.
 * Its output (the Worker's log lines included) goes to `state/wrangler.log`, never through
 * this process: the load generator runs here, and reading every log line would tax it.
 * The inspector port is set explicitly so that every port a run binds is known beforehand.
 *
 * @param args - extra wrangler dev arguments (`-c`, `--env-file`, `--var`...).
 * @returns the wrangler process, the leader of its process group.
 * @throws when wrangler exits before it is ready, or is not ready after 120 s (with its output).
 */
export async function startWorker(
  args: string[],
  ports: WorkerPorts,
  state: string,
): Promise<ChildProcess> {
  mkdirSync(state, { recursive: true });
  const logPath = join(state, 'wrangler.log');
  const log = openSync(logPath, 'w');
  const child = spawnGroup(
    wrangler,
    [
      'dev',
      '--ip',
      HOST,
      '--port',
      String(ports.port),
      '--inspector-ip',
      HOST,
      '--inspector-port',
      String(ports.inspectorPort),
      '--persist-to',
      state,
      '--show-interactive-dev-session=false',
      ...args,
    ],
    { cwd: root, env: quiet, stdio: ['ignore', log, log] },
  );
  closeSync(log);
  const output = () => readFileSync(logPath, 'utf8');
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    if (exited !== undefined) throw new Error(`wrangler dev exited ${exited}:\n${output()}`);
    const answered = await fetch(`http://${HOST}:${ports.port}/`, {
      signal: AbortSignal.timeout(1000),
    })
      .then(async (res) => {
        await res.arrayBuffer();
        return true;
      })
      .catch(() => false);
    if (answered) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`wrangler dev not ready after 120 s:\n${output()}`);
}

// Runs a wrangler command to its end (at most 120 s), its output into `outPath` if given.
async function runWrangler(args: string[], outPath?: string): Promise<number | null> {
  const out = outPath === undefined ? 'ignore' : openSync(outPath, 'w');
  const child = spawnGroup(wrangler, args, {
    cwd: root,
    env: quiet,
    stdio: ['ignore', out, 'ignore'],
    timeout: 120_000,
  });
  if (typeof out === 'number') closeSync(out);
  return new Promise((resolve) => {
    child.once('exit', (exitCode) => resolve(exitCode));
  });
}

/**
 * Applies the D1 migrations to the local state in `state`.
 *
 * @param binding - the D1 binding to migrate. @default 'DB'
 * @param config - the wrangler configuration naming it. @default the repository's wrangler.toml
 * @throws when wrangler fails or takes over 120 s.
 */
export async function migrate(state: string, binding = 'DB', config?: string): Promise<void> {
  const configArgs = config === undefined ? [] : ['-c', config];
  const args = ['d1', 'migrations', 'apply', binding, '--local', '--persist-to', state];
  const code = await runWrangler([...args, ...configArgs]);
  if (code !== 0) throw new Error(`wrangler d1 migrations apply ${binding} exited ${code}`);
}

/**
 * Counts the rows of `table` in the local D1 database bound as `binding` in `state`, with
 * `wrangler d1 execute --local` (it opens the same SQLite file as the Worker).
 *
 * @param config - the wrangler configuration naming `binding`.
 * @throws when wrangler fails, takes over 120 s, or prints no count.
 */
export async function countRows(
  state: string,
  config: string,
  binding: string,
  table: string,
): Promise<number> {
  const outPath = join(state, `count-${binding}.json`);
  const sql = `SELECT COUNT(*) AS n FROM ${table}`;
  const args = ['d1', 'execute', binding, '--local', '--persist-to', state, '-c', config];
  const code = await runWrangler([...args, '--json', '--command', sql], outPath);
  const output = readFileSync(outPath, 'utf8');
  if (code !== 0) throw new Error(`wrangler d1 execute ${binding} exited ${code}:\n${output}`);
  // `--json` prints one result per statement: [{ results: [{ n }], success, meta }].
  const n = (JSON.parse(output) as { results?: { n?: unknown }[] }[])[0]?.results?.[0]?.n;
  if (typeof n !== 'number')
    throw new Error(`wrangler d1 execute ${binding}: no count in\n${output}`);
  return n;
}

/**
 * Starts the sandbox emulator on `port` (the upstream of every Worker benchmarked) and
 * registers its shutdown.
 */
export async function startSandbox(port: number): Promise<SandboxServer> {
  const sandbox = await startSandboxServer({ port, host: HOST });
  onCleanup(() => sandbox.close());
  return sandbox;
}

/** The gateway a relay benchmark started: where it answers and where its local state is. */
export interface RelayGateway {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The gateway's local state (D1, queues) and wrangler.log; removed when the run succeeds. */
  readonly state: string;
}

/**
 * Starts what the relay benchmarks measure: the sandbox on `sandboxPort` as the upstream,
 * fresh local state with the D1 migrations applied, and the gateway Worker under `wrangler
 * dev` with the committed local secrets (`.dev.vars.example`), subscribers on 127.0.0.1
 * allowed, and no per-address webhook limit (the relay is measured, not the limit).
 *
 * @param statePrefix - the name prefix of the state directory, e.g. `edgepay-bench-relay-`.
 * @throws when the sandbox, the migrations or wrangler fail to start (see {@link startWorker}).
 */
export async function startRelayGateway(
  sandboxPort: number,
  ports: WorkerPorts,
  statePrefix: string,
): Promise<RelayGateway> {
  const sandbox = await startSandbox(sandboxPort);
  const state = tempState(statePrefix);
  await migrate(state);
  await startWorker(
    [
      '--env-file',
      join(root, '.dev.vars.example'),
      '--var',
      `UPSTREAM_BASE_URL:${sandbox.url}`,
      '--var',
      'ALLOW_LOCAL_SUBSCRIBERS:true',
      '--var',
      'WEBHOOK_RATE_LIMIT_PER_MINUTE:0',
    ],
    ports,
    state,
  );
  return { url: `http://${HOST}:${ports.port}`, state };
}
