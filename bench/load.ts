// Load runs with autocannon in the benchmark's own process, and the rotated comparison
// of several cases. A run whose responses are not all 2xx stops the benchmark: its
// throughput would be the speed of failing, not of doing the work.
import autocannon from 'autocannon';
import { BenchmarkError } from './lifecycle.ts';

/** Concurrent connections of every load run. */
const CONNECTIONS = 10;

/** One load run's outcome: mean req/s, latency percentiles in ms, answers (all 2xx). */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** Requests answered during the run; every one of them 2xx. */
  answered: number;
}

/**
 * Runs autocannon ({@link CONNECTIONS} connections, each request timing out after 10 s)
 * against one case for `seconds`.
 *
 * @param name - the case, for the error message.
 * @param seconds - the run's length in seconds.
 * @throws {BenchmarkError} when any response was not 2xx, or any request failed or timed out:
 *   the message gives the count per status.
 */
export async function runLoad(
  name: string,
  options: autocannon.Options,
  seconds: number,
): Promise<LoadResult> {
  const result = await autocannon({
    connections: CONNECTIONS,
    timeout: 10,
    ...options,
    duration: seconds,
  });
  assertAll2xx(name, result);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    answered: result['2xx'],
  };
}

function assertAll2xx(name: string, result: autocannon.Result): void {
  const problems: string[] = [];
  if (result.non2xx > 0) {
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, stats]) => `${stats.count ?? 0} x ${status}`);
    problems.push(`${result.non2xx} answers not 2xx (${statuses.join(', ')})`);
  }
  if (result.errors > 0) {
    problems.push(`${result.errors} requests failed (${result.timeouts} of them timed out)`);
  }
  if (result['2xx'] === 0) problems.push('no 2xx answer at all');
  if (problems.length === 0) return;
  throw new BenchmarkError(
    `${name}: ${problems.join('; ')}, out of ${result.requests.total} answered in ` +
      `${result.duration} s. A case whose answers are not all 2xx gives no figure: stopping. ` +
      `The Worker's own log lines (wrangler.log) name the error codes.`,
  );
}

/** The median of `values` (the upper one of an even count); 0 when empty. */
export function median(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;
}

function seconds(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 600) {
    throw new BenchmarkError(`${name} must be a whole number from 1 to 600, not ${value}`);
  }
  return value;
}

/**
 * Seconds and rounds of a throughput comparison, from DURATION_SEC (10), WARMUP_SEC (3)
 * and ROUNDS (3), each a whole number from 1 to 600.
 */
export const LOAD_PLAN = {
  duration: seconds('DURATION_SEC', 10),
  warmup: seconds('WARMUP_SEC', 3),
  rounds: seconds('ROUNDS', 3),
};

/** One case of a comparison: runs its load for the given seconds. */
export type LoadCase = (seconds: number) => Promise<LoadResult>;

/**
 * Runs every case once per round, a warm-up run before each measured one, the order
 * rotated each round so no case always goes first; returns each case's medians (req/s,
 * p50 and p99 in ms) and the responses it got over all measured runs.
 *
 * @param cases - by name, in the order the table lists them.
 * @throws {BenchmarkError} from the first run, warm-up or measured, not answered all 2xx.
 */
export async function compareCases(
  cases: Record<string, LoadCase>,
): Promise<Record<string, LoadResult>> {
  const names = Object.keys(cases);
  const runs = new Map<string, LoadResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < LOAD_PLAN.rounds; round++) {
    const shift = round % names.length;
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
      const run = cases[name] as LoadCase;
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
        answered: results.reduce((sum, r) => sum + r.answered, 0),
      };
      return [name, summary];
    }),
  );
}

/** Prints {@link compareCases}' results as the Markdown table bench/README.md records. */
export function printComparison(summary: Record<string, LoadResult>): void {
  console.log('| case | req/s | p50 ms | p99 ms | answers (all 2xx) |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of Object.entries(summary)) {
    console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.answered} |`);
  }
}

/** The plan as one line under a table: rounds, seconds, connections. */
export function describePlan(): string {
  return `${LOAD_PLAN.rounds} rounds, ${LOAD_PLAN.duration} s each after ${LOAD_PLAN.warmup} s warm-up, ${CONNECTIONS} connections, order rotated, medians`;
}
