// The load model: measures what one webhook event (with 0, 1 and 3 subscriptions), one
// delivery attempt and one idempotent POST cost on the real schema and the real Worker (D1
// queries, round trips, rows read and written, bytes stored, queue messages, Durable Object
// requests, subrequests), then turns the counts, with Cloudflare's published limits and
// prices (bench/scale/platform.ts), into the rates at which each ceiling is met for a number
// of D1 shards, the cost per million, and the shards a target needs. No timings: the counts
// do not depend on the machine's load.
//
// How it measures: workerd cannot write files, so it runs the measuring file
// (test/worker/scale/measure-units.ts) with vitest and bench/scale/vitest.config.ts (the
// worker tests' set-up: migrations applied to a fresh local D1, the sandbox as upstream),
// and the file POSTs its counts to a sink on 127.0.0.1:19910 (bench/scale/global-setup.ts)
// that writes them where this process reads them.
//
// Run: npm run bench -- scale [N]        (N shards besides 1 and 3; default 1)
//      npm run bench -- scale [N] --save <file>           (keeps the measurements' JSON)
//      npm run bench -- scale [N] --measurements <file>   (the model on a saved run)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argv, exit } from 'node:process';
import { type ModelOptions, type Platform, runModel } from './scale/model.ts';
import {
  LIMITS,
  OBJECT_BILLED_GB,
  PRICES,
  QUEUE_OPERATIONS_PER_MESSAGE,
  READ_ON,
} from './scale/platform.ts';
import { scaleLine, TARGET_100M } from './scale/summary.ts';
import {
  ceilingsTable,
  costTable,
  targetConfiguration,
  targetText,
  unitsTable,
  VOLUMES,
  volumeTable,
} from './scale/table.ts';
import { solveTarget, type Target } from './scale/target.ts';
import { type Measured, parseMeasured } from './scale/units.ts';

const root = new URL('..', import.meta.url).pathname;

/** The published figures, as the model reads them. */
const PLATFORM: Platform = {
  d1DatabaseBytes: LIMITS.d1DatabaseBytes.value,
  d1QueriesPerSecond: LIMITS.d1QueriesPerSecond.value,
  queueMessagesPerSecond: LIMITS.queueMessagesPerSecond.value,
  objectRequestsPerSecond: LIMITS.objectRequestsPerSecond.value,
  objectStorageBytes: LIMITS.objectStorageBytes.value,
  price: Object.fromEntries(
    Object.entries(PRICES).map(([name, { value }]) => [name, value]),
  ) as unknown as Platform['price'],
  queueOperationsPerMessage: QUEUE_OPERATIONS_PER_MESSAGE,
  objectBilledGb: OBJECT_BILLED_GB,
};

/** The stated target (docs/deploy.md): 10 M events a day for 30 days, 1,000 POSTs/s at peak. */
const TARGET: Target = {
  eventsPerDay: 10_000_000,
  retentionDays: 30,
  peakPostsPerSecond: 1000,
  // Assumed (docs/assumptions.md): the day's average is a quarter of the peak.
  averagePostsPerSecond: 250,
  headroom: 0.5,
  // Stored bytes grow only with traffic and are purged on a schedule: filled to 80 %.
  sizeHeadroom: 0.8,
};

// A setting's value in wrangler.toml's top-level [vars] and consumer (the deployed defaults).
function wranglerSetting(pattern: RegExp, what: string): number {
  const found = pattern.exec(readFileSync(join(root, 'wrangler.toml'), 'utf8'))?.[1];
  if (found === undefined) throw new Error(`wrangler.toml: ${what} not found`);
  return Number(found);
}

function modelOptions(): ModelOptions {
  const cronMinutes = wranglerSetting(/crons = \["\*\/(\d+) \* \* \* \*"\]/, 'the cron step');
  return {
    shards: 1,
    retentionDays: wranglerSetting(/RELAY_RETENTION_DAYS = "(\d+)"/, 'RELAY_RETENTION_DAYS'),
    idempotencyRetentionSec: wranglerSetting(
      /IDEMPOTENCY_RETENTION_SEC = "(\d+)"/,
      'IDEMPOTENCY_RETENTION_SEC',
    ),
    subscriptionsPerEvent: 1,
    consumerBatchSize: wranglerSetting(/max_batch_size = (\d+)/, 'max_batch_size'),
    cronRunsPerDay: (24 * 60) / cronMinutes,
    limiterPerObjectPerMinute: wranglerSetting(
      /RATE_LIMIT_PER_OBJECT_PER_MINUTE = "(\d+)"/,
      'RATE_LIMIT_PER_OBJECT_PER_MINUTE',
    ),
    // Assumed (docs/assumptions.md, "Load model"): not published, not measured here.
    assumed: {
      cpuMsPerInvocation: 3,
      outboxActiveMsPerDelivery: 300,
      limiterActiveMs: 10,
      keyObjectActiveMs: 10,
      consumerInvocationMs: 1000,
    },
  };
}

/** A run's measurements, and where and when they were made. */
interface Run {
  readonly measured: Measured;
  readonly code: string;
  readonly at: string;
}

function measure(save: string | undefined): Run {
  const dir = mkdtempSync(join(tmpdir(), 'edgepay-scale-'));
  const file = join(dir, 'measurements.json');
  try {
    const vitest = spawnSync(
      join(root, 'node_modules/.bin/vitest'),
      ['run', '--config', 'bench/scale/vitest.config.ts'],
      {
        cwd: root,
        stdio: 'inherit',
        env: {
          ...process.env,
          SCALE_MEASUREMENTS_FILE: file,
          // Attempts are measured in full batches of the consumer, as they come under load.
          SCALE_CONSUMER_BATCH: String(modelOptions().consumerBatchSize),
        },
      },
    );
    if (vitest.status !== 0) throw new Error(`the measuring run failed (exit ${vitest.status})`);
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const run = { code: measuredCode(), at: new Date().toISOString() };
    if (save !== undefined) writeFileSync(save, JSON.stringify({ ...raw, ...run }));
    return { measured: parseMeasured(raw), ...run };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A run saved with --save: its measurements, commit and time.
function load(file: string): Run {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { code?: unknown; at?: unknown };
  const known = (value: unknown) => (typeof value === 'string' ? value : `unknown (${file})`);
  return { measured: parseMeasured(raw), code: known(raw.code), at: known(raw.at) };
}

// The commit measured, and the files of the measured paths not committed yet (others may be
// changing them while this runs).
function measuredCode(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
  // Porcelain lines are `XY path`, and X may be a space: the output is not trimmed first.
  const changed = git('status', '--porcelain', '--', 'worker', 'migrations')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  const head = git('rev-parse', '--short', 'HEAD').trim();
  return changed.length === 0 ? head : `${head} with uncommitted changes to ${changed.join(', ')}`;
}

function main(): void {
  const args = argv.slice(2);
  // `--measurements <file>` and `--save <file>`: the word after each is a file, never N.
  const flagValue = (flag: string) => {
    const at = args.indexOf(flag);
    return at === -1 ? undefined : args[at + 1];
  };
  const saved = flagValue('--measurements');
  const save = flagValue('--save');
  const shardsArg = args.find(
    (arg, index) =>
      /^\d+$/.test(arg) && !['--measurements', '--save'].includes(args[index - 1] ?? ''),
  );
  const asked = Number(shardsArg ?? 1);
  if (!Number.isInteger(asked) || asked < 1)
    throw new Error(`N must be a whole number >= 1, got ${shardsArg}`);
  const { measured, code, at } = saved === undefined ? measure(save) : load(saved);
  const options = modelOptions();
  const target = solveTarget(measured, PLATFORM, options, TARGET);
  const shards = [...new Set([1, 3, asked, target.shards])].sort((a, b) => a - b);
  const models = shards.map((n) => runModel(measured, PLATFORM, { ...options, shards: n }));
  const week = runModel(measured, PLATFORM, { ...options, retentionDays: 7 });
  const ingress = measured.ingest[3];
  const otherSubrequests =
    ingress.queueSendCalls + ingress.fetches + (ingress.objectRequests.RATE_LIMITER ?? 0);
  console.log(`\n## Load model: measured ${at} at ${code}`);
  console.log(`Limits and prices read ${READ_ON} (bench/scale/platform.ts).\n`);
  console.log(unitsTable(measured));
  console.log(
    `\nPer invocation: the ingress (3 subscriptions) runs ${ingress.statements} of the ${LIMITS.d1QueriesPerInvocation.value.toLocaleString('en-US')} D1 queries allowed and ${otherSubrequests} other subrequests of ${LIMITS.subrequestsPerInvocation.value.toLocaleString('en-US')}; a cron run ${measured.purge.statements} D1 queries.`,
  );
  const event = models[0]?.event;
  const offDb = measured.otherShard;
  console.log(
    `\nWith the event on a shard other than DB (${offDb.ingest[1].samples} samples each): ingest ${offDb.ingest[0].statements} / ${offDb.ingest[1].statements} / ${offDb.ingest[3].statements} D1 queries there (0 / 1 / 3 subscriptions) and ${offDb.ingest[0].onDb.statements} / ${offDb.ingest[1].onDb.statements} / ${offDb.ingest[3].onDb.statements} in DB; an attempt ${offDb.attempt.statements} there and ${offDb.attempt.onDb.statements} in DB (${offDb.attempt.onDb.roundTrips} round trips, ${offDb.attempt.onDb.rowsWritten} rows written).`,
  );
  if (event !== undefined) {
    console.log(
      `\nPer event with ${options.subscriptionsPerEvent} subscription, delivered at the first attempt: ${event.d1Statements} D1 queries, ${event.d1RowsWritten} D1 rows written, ${Math.round(event.d1Bytes)} B kept, ${event.queueMessages} queue message, ${event.limiterRequests + event.deliveries * event.outboxRequestsPerDelivery + event.eventObjectRequests} Durable Object requests, ${event.workerInvocations} Worker invocations (the ingress, and its share of a consumer batch of ${options.consumerBatchSize}), ${event.fetches} fetch subrequest.`,
    );
  }
  console.log(
    `\n### Ceilings (${options.subscriptionsPerEvent} subscription per event, retention ${options.retentionDays} days)\n`,
  );
  console.log(ceilingsTable(models));
  const weekSize = week.ceilings[0]?.eventsPerDay ?? 0;
  console.log(
    `\nWith RELAY_RETENTION_DAYS = 7 the D1 size ceiling is ${Math.round(weekSize).toLocaleString('en-US')} events/day per shard.`,
  );
  console.log(`\n### Cost per million (usage above the plan's inclusions)\n`);
  console.log(costTable(models[0] ?? runModel(measured, PLATFORM, options)));
  console.log(`\n### Target configuration\n`);
  console.log(targetText(target, TARGET));
  console.log(`\n${targetConfiguration(target)}`);
  const byVolume = VOLUMES.map((eventsPerDay) =>
    solveTarget(measured, PLATFORM, options, {
      ...TARGET,
      eventsPerDay,
      peakPostsPerSecond: 0,
      averagePostsPerSecond: 0,
    }),
  );
  console.log(
    `\n### By volume (events kept ${TARGET.retentionDays} days, one subscription; POSTs apart, at $${(models[0]?.costPerMillion.posts.total ?? 0).toFixed(2)} a million)\n`,
  );
  console.log(volumeTable(byVolume, VOLUMES));
  const at100m = solveTarget(measured, PLATFORM, options, TARGET_100M);
  console.log(`\n### 100 million events a day, 2,000 POSTs/s at peak\n`);
  console.log(targetText(at100m, TARGET_100M));
  console.log(
    `\n${scaleLine(measured, models[0] ?? runModel(measured, PLATFORM, options), at100m)}`,
  );
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  exit(1);
}
