/**
 * The target configuration of the load model: the cron period and the fewest D1 shards that
 * carry a given event rate and retention with headroom below every per-shard ceiling and
 * below the retention purge, which one cron run shares over every shard (worker/cron-budget.ts); the ceilings
 * that shards do not raise (`DB`'s query thread, the idempotency key objects among them); the
 * queue's settings; and the
 * monthly cost by item. Pure, like bench/scale/model.ts.
 */
import { KEY_BUCKETS } from '../../worker/objects/buckets.ts';
import {
  eventsPurgedPerRun,
  type ModelOptions,
  type ModelResult,
  type Platform,
  runModel,
} from './model.ts';
import type { Measured } from './units.ts';

const DAY_SEC = 86_400;
const MONTH_DAYS = 30;
const DAY_MINUTES = 1440;

/**
 * Cron periods the solver tries, in minutes, longest first: the `*\/M * * * *` forms whose
 * period worker/cron-budget.ts `cronPeriodMs` reads (M divides 60, so runs stay evenly
 * spaced across the hour).
 */
const CRON_MINUTES = [15, 10, 5, 3, 2, 1] as const;

/**
 * Most shards the solver tries: every one of them is visited by each cron run up to here
 * (worker/cron-budget.ts), and a generation of `D1_SHARDS` lists at most 128.
 */
const MAX_SHARDS = 128;

/** What the deployment must hold. */
export interface Target {
  readonly eventsPerDay: number;
  readonly retentionDays: number;
  /** Idempotent POSTs a second at peak (the query thread and the limiter must carry it). */
  readonly peakPostsPerSecond: number;
  /** Idempotent POSTs a second on average over a day (the stored keys and the bill). */
  readonly averagePostsPerSecond: number;
  /** Share of each rate limit the deployment may use, e.g. 0.5 (peaks, retries, admin reads). */
  readonly headroom: number;
  /** Share of a database's size the stored events and keys may fill, e.g. 0.8. */
  readonly sizeHeadroom: number;
}

/** What must change besides shards, and how far the target is from it. */
interface Beyond {
  readonly name: string;
  /** The target's use of the limit, as a share of it (above 1: over). */
  readonly use: number;
  readonly remedy: string;
}

/** The queue consumer's settings for the target (wrangler.toml `[[queues.consumers]]`). */
interface QueueSettings {
  readonly messagesPerSecond: number;
  readonly invocationsPerSecond: number;
  readonly maxBatchSize: number;
  /**
   * Concurrent consumer invocations the average rate needs with the headroom: invocations a
   * second times how long one lasts (`assumed.consumerInvocationMs`), over the headroom.
   */
  readonly maxConcurrency: number;
}

/** The model's answer for a target. */
export interface TargetResult {
  readonly shards: number;
  /** The cron step in minutes (`*\/M * * * *`) and its runs a day. */
  readonly cron: { readonly minutes: number; readonly runsPerDay: number };
  /** Shards each per-shard constraint needs on its own (at the chosen cron step). */
  readonly needs: Readonly<Record<string, number>>;
  readonly beyond: readonly Beyond[];
  readonly model: ModelResult;
  readonly queue: QueueSettings;
  /** Dollars a month: events, POSTs and their sum (usage, without the plan's $5 and inclusions). */
  readonly monthly: { readonly events: number; readonly posts: number; readonly total: number };
  /** The month's dollars by item (events and POSTs together), as the cost table's items. */
  readonly monthlyByItem: Readonly<Record<string, number>>;
}

/**
 * The longest cron step and the fewest shards for `target`, and the model at that many.
 * The step is shortened from the configured one (`options.cronRunsPerDay`) only when no
 * shard count lets a run purge a day's events and keys within the headroom.
 *
 * @param measured - the measurements.
 * @param platform - the published limits and prices.
 * @param options - the model's options; `shards`, `retentionDays` and (when the purges need
 *   it) `cronRunsPerDay` are replaced.
 * @param target - the rates, retention and headroom.
 */
export function solveTarget(
  measured: Measured,
  platform: Platform,
  options: ModelOptions,
  target: Target,
): TargetResult {
  const configured = DAY_MINUTES / options.cronRunsPerDay;
  const steps = CRON_MINUTES.filter((minutes) => minutes <= configured);
  const tries = (steps.length > 0 ? steps : [configured]).map((minutes) =>
    solveAt(measured, platform, { ...options, cronRunsPerDay: DAY_MINUTES / minutes }, target),
  );
  const fits = tries.find((result) => purgeFits(result, target));
  return fits ?? (tries[tries.length - 1] as TargetResult);
}

const purgeFits = (result: TargetResult, target: Target) =>
  result.beyond
    .filter((item) => item.name.startsWith('Retention purge'))
    .every((item) => item.use <= target.headroom);

function solveAt(
  measured: Measured,
  platform: Platform,
  options: ModelOptions,
  target: Target,
): TargetResult {
  const at = (shards: number) =>
    runModel(measured, platform, { ...options, shards, retentionDays: target.retentionDays });
  const { post } = at(1);
  const eventsPerSecond = target.eventsPerDay / DAY_SEC;
  const usable = (limit: number) => limit * target.headroom;
  const runs = options.cronRunsPerDay;
  // Events a cron run must be able to purge for a day's to use `headroom` of it.
  const eventsPerRun = target.eventsPerDay / runs / target.headroom;
  const { purge } = measured;
  const eventsPurge = (n: number) => eventsPurgedPerRun(purge.eventsPurged, n) >= eventsPerRun;
  // Every shard's own events cost what a shard other than DB measured (DB's own are a share).
  const atHome = at(2).event.d1StatementsAtHome;
  const needs = {
    'D1 size': Math.ceil(
      (target.eventsPerDay * target.retentionDays * at(1).event.d1Bytes) /
        (platform.d1DatabaseBytes * target.sizeHeadroom),
    ),
    'D1 query rate of each shard': Math.ceil(
      (eventsPerSecond * atHome + target.peakPostsPerSecond * post.d1Statements) /
        usable(platform.d1QueriesPerSecond),
    ),
    'Retention purge, events': fewest(1, eventsPurge),
  };
  const from = Math.max(1, needs['D1 size'], needs['D1 query rate of each shard']);
  // More shards may purge less (each visit gets fewer statements): from the per-shard needs
  // up, the fewest that carry the purge, or else the most a run purges.
  const shards = fewest(from, eventsPurge) ?? mostPurged(from, measured, eventsPerRun);
  const model = at(shards);
  const { event } = model;
  const beyond: Beyond[] = [
    {
      name: 'D1 query rate of DB (subscriptions; their copies refreshed from it)',
      use:
        (eventsPerSecond * event.d1StatementsOnDb +
          (target.peakPostsPerSecond * post.d1Statements) / shards) /
        platform.d1QueriesPerSecond,
      remedy:
        'fewer events stored in DB itself (it is one of the shards), not more queries per event',
    },
    {
      name: 'Retention purge of events (one cron run, every shard together)',
      use: target.eventsPerDay / (eventsPurgedPerRun(purge.eventsPurged, shards) * runs),
      remedy: 'more cron runs a day (a shorter cron step)',
    },
    {
      name: `Idempotency key objects at peak (${KEY_BUCKETS}, keys spread by hash)`,
      use:
        (target.peakPostsPerSecond * post.keyRequests) /
        (KEY_BUCKETS * platform.objectRequestsPerSecond),
      remedy:
        'more key objects (a new set: keys claimed in the old one stay there until they expire)',
    },
    {
      name: `Idempotency key objects' storage (${KEY_BUCKETS})`,
      use:
        (target.averagePostsPerSecond * options.idempotencyRetentionSec * post.keyBytes) /
        (KEY_BUCKETS * platform.objectStorageBytes),
      remedy: 'a shorter IDEMPOTENCY_RETENTION_SEC, or more key objects',
    },
    {
      name: 'Queue throughput (one queue)',
      use: (eventsPerSecond * event.queueMessages) / platform.queueMessagesPerSecond,
      remedy: 'more queues (deliveries spread by subscription)',
    },
    {
      name: 'Outbox object of a subscription receiving every event',
      use: (eventsPerSecond * event.outboxRequestsPerDelivery) / platform.objectRequestsPerSecond,
      remedy: 'none needed below 1',
    },
    {
      name: 'Limiter objects of one caller sending every POST at peak',
      use: limiterUse(target.peakPostsPerSecond * post.limiterRequests, options, platform),
      remedy: 'a lower RATE_LIMIT_PER_OBJECT_PER_MINUTE, so more objects share the limit',
    },
    {
      name: 'Limiter objects of one webhook sending address',
      use: limiterUse(eventsPerSecond * event.limiterRequests, options, platform),
      remedy: 'a lower RATE_LIMIT_PER_OBJECT_PER_MINUTE, so more objects share the limit',
    },
  ];
  const monthlyEvents = target.eventsPerDay * MONTH_DAYS;
  const monthlyPosts = target.averagePostsPerSecond * DAY_SEC * MONTH_DAYS;
  const { events: perMillionEvents, posts: perMillionPosts } = model.costPerMillion;
  const monthlyByItem = Object.fromEntries(
    Object.keys(perMillionEvents).map((item) => [
      item,
      (monthlyEvents / 1e6) * (perMillionEvents[item] ?? 0) +
        (monthlyPosts / 1e6) * (perMillionPosts[item] ?? 0),
    ]),
  );
  const events = (monthlyEvents / 1e6) * (perMillionEvents.total ?? 0);
  const posts = (monthlyPosts / 1e6) * (perMillionPosts.total ?? 0);
  const messagesPerSecond = eventsPerSecond * event.queueMessages;
  const invocationsPerSecond = messagesPerSecond / options.consumerBatchSize;
  return {
    shards,
    cron: { minutes: DAY_MINUTES / runs, runsPerDay: runs },
    needs: {
      ...needs,
      'Retention purge, events': needs['Retention purge, events'] ?? shards,
    },
    beyond,
    model,
    queue: {
      messagesPerSecond,
      invocationsPerSecond,
      maxBatchSize: options.consumerBatchSize,
      maxConcurrency: Math.max(
        1,
        Math.ceil(
          (invocationsPerSecond * options.assumed.consumerInvocationMs) / 1000 / target.headroom,
        ),
      ),
    },
    monthly: { events, posts, total: events + posts },
    monthlyByItem,
  };
}

/** The fewest shard count from `from` up to {@link MAX_SHARDS} that `ok`, or `undefined`. */
function fewest(from: number, ok: (shards: number) => boolean): number | undefined {
  for (let shards = from; shards <= MAX_SHARDS; shards++) if (ok(shards)) return shards;
  return undefined;
}

/** From `from` up, the shard count whose run purges the most events, when none carries them all. */
function mostPurged(from: number, measured: Measured, eventsPerRun: number): number {
  const carried = (n: number) =>
    eventsPurgedPerRun(measured.purge.eventsPurged, n) / Math.max(eventsPerRun, 1e-9);
  let best = from;
  for (let shards = from; shards <= Math.max(from, MAX_SHARDS); shards++) {
    if (carried(shards) > carried(best)) best = shards;
  }
  return best;
}

/**
 * The share of one limiter object's documented rate that a sender sending `perSecond`
 * requests uses, its limit set to that rate: the limit is spread over
 * ceil(limit / `limiterPerObjectPerMinute`) objects, each taking its share.
 */
function limiterUse(perSecond: number, options: ModelOptions, platform: Platform): number {
  const objects = Math.max(1, Math.ceil((perSecond * 60) / options.limiterPerObjectPerMinute));
  return perSecond / objects / platform.objectRequestsPerSecond;
}
