// The rate limiter's own ceiling: how many `take` calls a second one object of the gateway's
// limiter class (worker/rate-limit/caller-rate-limiter.ts) answers under `wrangler dev`, and
// the same calls dealt over 2 and 4 objects, as a limit above RATE_LIMIT_PER_OBJECT_PER_MINUTE
// is. A Worker of its own (bench/limiter-worker) sends the calls, LANES at a time, and times
// them; every call is allowed and stores its state, as an allowed request does. Locally every
// object runs in the same workerd process on this machine's cores, so spreading cannot add
// much here: the figure to read is one object's, against the platform's documented ceiling
// for one object (bench/README.md, "Rate limiter").
// Run: npm run bench -- limiter   (ROUNDS, TAKES, LANES to change the plan)
import { join } from 'node:path';
import { root, startWorker } from './harness.ts';
import { assertPortsFree, BenchmarkError, HOST, runBenchmark, tempState } from './lifecycle.ts';
import { median } from './load.ts';

// 1992x: this benchmark's own ports, apart from the gateway's and the relay's.
const LIMITER = { port: 19920, inspectorPort: 19921 };

/** Objects one run's calls are dealt over. */
const SPREADS = [1, 2, 4] as const;

function planned(name: string, fallback: number, max: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new BenchmarkError(`${name} must be a whole number from 1 to ${max}, not ${value}`);
  }
  return value;
}

const ROUNDS = planned('ROUNDS', 7, 50);
// Under the 1,000 subrequests one Worker invocation may make.
const TAKES = planned('TAKES', 900, 900);
const LANES = planned('LANES', 32, 128);

/** One timed batch: what the Worker answered. */
interface Batch {
  objects: number;
  takes: number;
  elapsedMs: number;
  refused: number;
}

async function batch(objects: number): Promise<Batch> {
  const url = `http://${HOST}:${LIMITER.port}/takes?objects=${objects}&takes=${TAKES}&lanes=${LANES}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new BenchmarkError(`${url} answered ${res.status}: ${await res.text()}`);
  const result = (await res.json()) as Batch;
  if (result.refused !== 0) throw new BenchmarkError(`${result.refused} takes refused: no figure`);
  return result;
}

await runBenchmark(async () => {
  await assertPortsFree([LIMITER.port, LIMITER.inspectorPort]);
  const state = tempState('edgepay-bench-limiter-');
  await startWorker(['-c', join(root, 'bench', 'limiter-worker', 'wrangler.toml')], LIMITER, state);
  // Warm-up: the isolate compiled and the storage files open before any figure.
  for (const objects of SPREADS) await batch(objects);

  // Rotated, so a slow spell of the shared machine falls on every spread alike.
  const perSecond = new Map<number, number[]>(SPREADS.map((objects) => [objects, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let turn = 0; turn < SPREADS.length; turn += 1) {
      const objects = SPREADS[(round + turn) % SPREADS.length] ?? 1;
      const { takes, elapsedMs } = await batch(objects);
      perSecond.get(objects)?.push((takes * 1000) / Math.max(1, elapsedMs));
    }
  }

  console.log(
    `\nRate limiter takes a second, ${TAKES} takes ${LANES} at a time, median of ${ROUNDS} rounds` +
      ' (wrangler dev on this machine, shared with other work: read the ratios, not the figures)',
  );
  const one = median(perSecond.get(1) ?? []);
  for (const objects of SPREADS) {
    const figures = perSecond.get(objects) ?? [];
    const value = median(figures);
    const spread = `${Math.round(Math.min(...figures))} to ${Math.round(Math.max(...figures))}`;
    console.log(
      `  ${String(objects).padStart(2)} object(s): ${Math.round(value)} takes/s ` +
        `(${spread}), ${(value / one).toFixed(2)}x one object`,
    );
  }
  console.log(`\n${new Date().toISOString()}, Node ${process.version}, nothing refused`);
});
