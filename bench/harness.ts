// What the wrangler dev benchmarks share: starting Workers, applying migrations, load runs.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';

/** The repository root. */
export const root = join(import.meta.dirname, '..');
/** Every benchmark server listens here only. */
export const HOST = '127.0.0.1';

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

/**
 * Starts `wrangler dev` on `port` with local state in `state`, resolving once it is ready.
 * Its output (the Worker's log lines included) goes to `state/wrangler.log`, never through
 * this process: the load generator runs here, and reading every log line would tax it.
 *
 * @param args - extra wrangler dev arguments (`-c`, `--env-file`, `--var`...).
 * @throws when wrangler exits before it is ready (with its output).
 */
export function startWorker(args: string[], port: number, state: string): Promise<ChildProcess> {
  mkdirSync(state, { recursive: true });
  const logPath = join(state, 'wrangler.log');
  const log = openSync(logPath, 'w');
  const child = spawn(
    wrangler,
    [
      'dev',
      '--ip',
      HOST,
      '--port',
      String(port),
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
  return (async () => {
    // Ready when it answers HTTP at all; bounded: two minutes means it never will be.
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      if (exited !== undefined) throw new Error(`wrangler dev exited ${exited}:\n${output()}`);
      const answered = await fetch(`http://${HOST}:${port}/`, { signal: AbortSignal.timeout(1000) })
        .then(async (res) => {
          await res.arrayBuffer();
          return true;
        })
        .catch(() => false);
      if (answered) return child;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    child.kill('SIGTERM');
    throw new Error(`wrangler dev not ready after 120 s:\n${output()}`);
  })();
}

/**
 * Applies the D1 migrations to the local state in `state`.
 *
 * @throws when wrangler fails.
 */
export function migrate(state: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      wrangler,
      ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state],
      {
        cwd: root,
        env: quiet,
        stdio: 'ignore',
      },
    );
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`migrations exited ${code}`)),
    );
  });
}

/** One load run's outcome: mean req/s, latency percentiles in ms, answers that were not 2xx. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/**
 * Runs autocannon in this process (10 connections unless `options` says otherwise).
 *
 * @param seconds - the run's length in seconds.
 */
export async function runLoad(options: autocannon.Options, seconds: number): Promise<LoadResult> {
  const result = await autocannon({ connections: 10, ...options, duration: seconds });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** The median of `values` (the upper one of an even count); 0 when empty. */
export function median(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;
}

/** Seconds and rounds of a throughput comparison, from DURATION_SEC, WARMUP_SEC and ROUNDS. */
export const LOAD_PLAN = {
  duration: Number(process.env.DURATION_SEC ?? 10),
  warmup: Number(process.env.WARMUP_SEC ?? 3),
  rounds: Number(process.env.ROUNDS ?? 3),
};

/**
 * Runs every case once per round, a warm-up run before each measured one, the order
 * rotated each round so no case always goes first; returns each case's medians (req/s,
 * p50 and p99 in ms) and its summed non-2xx count.
 *
 * @param cases - by name: runs that case's load for the given seconds.
 */
export async function compareCases(
  cases: Record<string, (seconds: number) => Promise<LoadResult>>,
): Promise<Record<string, LoadResult>> {
  const names = Object.keys(cases);
  const runs = new Map<string, LoadResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < LOAD_PLAN.rounds; round++) {
    const shift = round % names.length;
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
      const run = cases[name] as (seconds: number) => Promise<LoadResult>;
      await run(LOAD_PLAN.warmup);
      runs.get(name)?.push(await run(LOAD_PLAN.duration));
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const results = runs.get(name) ?? [];
      const summary: LoadResult = {
        rps: median(results.map((r) => r.rps)),
        p50: median(results.map((r) => r.p50)),
        p99: median(results.map((r) => r.p99)),
        non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
      };
      return [name, summary];
    }),
  );
}

/** Prints {@link compareCases}' results as the Markdown table bench/README.md records. */
export function printComparison(summary: Record<string, LoadResult>): void {
  console.log('| case | req/s | p50 ms | p99 ms | non-2xx |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of Object.entries(summary)) {
    console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} |`);
  }
}
