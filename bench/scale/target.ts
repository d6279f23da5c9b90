/**
 * The target configuration of the load model: the fewest D1 shards that carry a given event
 * rate, retention and POST rate with headroom below every per-shard ceiling (events and keys
 * share the shards' size and query thread), the ceilings that shards do not raise (the key
 * purge's budget of statements per cron run among them), and the monthly cost. Events are
 * not spread over shards yet: for them this is the design's answer, not today's code's.
 * Pure, like bench/scale/model.ts.
 */
import {
  keysPurgedPerRun,
  type ModelOptions,
  type ModelResult,
  type Platform,
  runModel,
} from './model.ts';
import type { KeyPurgeRule, Measured } from './units.ts';

const DAY_SEC = 86_400;
const MONTH_DAYS = 30;

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

/** The model's answer for a target. */
export interface TargetResult {
  readonly shards: number;
  /** Shards each per-shard constraint needs on its own. */
  readonly needs: Readonly<Record<string, number>>;
  readonly beyond: readonly Beyond[];
  readonly model: ModelResult;
  /** Dollars a month: events, POSTs and their sum (usage, without the plan's $5 and inclusions). */
  readonly monthly: { readonly events: number; readonly posts: number; readonly total: number };
}

/**
 * The fewest shards for `target`, and the model at that many.
 *
 * @param measured - the measurements.
 * @param platform - the published limits and prices.
 * @param options - the model's options; `shards` and `retentionDays` are replaced.
 * @param target - the rates, retention and headroom.
 */
export function solveTarget(
  measured: Measured,
  platform: Platform,
  options: ModelOptions,
  target: Target,
): TargetResult {
  const base = runModel(measured, platform, {
    ...options,
    shards: 1,
    retentionDays: target.retentionDays,
  });
  const { event, post } = base;
  const eventsPerSecond = target.eventsPerDay / DAY_SEC;
  const usable = (limit: number) => limit * target.headroom;
  const keysStored = target.averagePostsPerSecond * options.idempotencyRetentionSec;
  const purgeRuns = options.cronRunsPerDay;
  const keysPerDay = target.averagePostsPerSecond * DAY_SEC;
  const rule = measured.purge.keyPurge;
  // Keys a cron run must be able to purge for the day's keys to use `headroom` of it.
  const keysPerRun = keysPerDay / purgeRuns / target.headroom;
  const needs = {
    'D1 size': Math.ceil(
      (target.eventsPerDay * target.retentionDays * event.d1Bytes + keysStored * post.d1Bytes) /
        (platform.d1DatabaseBytes * target.sizeHeadroom),
    ),
    'D1 query rate': Math.ceil(
      (eventsPerSecond * event.d1Statements + target.peakPostsPerSecond * post.d1Statements) /
        usable(platform.d1QueriesPerSecond),
    ),
    'Retention purge, events': Math.ceil(
      target.eventsPerDay / usable(measured.purge.eventsPurged * purgeRuns),
    ),
    'Retention purge, keys': keyPurgeShards(rule, keysPerRun, 1),
  };
  // More shards than the key purge needs may purge fewer keys (each gets fewer statements
  // once the run's are all used): from the most demanding need, the fewest that still do.
  const shards = keyPurgeShards(rule, keysPerRun, Math.max(1, ...Object.values(needs)));
  const model = runModel(measured, platform, {
    ...options,
    shards,
    retentionDays: target.retentionDays,
  });
  const beyond: Beyond[] = [
    {
      name: 'Queue throughput (one queue)',
      use: (eventsPerSecond * event.queueMessages) / platform.queueMessagesPerSecond,
      remedy: 'more queues (deliveries spread by subscription)',
    },
    {
      name: 'Retention purge of idempotency keys (one cron run, every shard together)',
      use: keysPerDay / (keysPurgedPerRun(rule, shards) * purgeRuns),
      remedy: 'more cron runs a day (a shorter cron step), or more keys per purge statement',
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
  const events = (monthlyEvents / 1e6) * (model.costPerMillion.events.total ?? 0);
  const posts = (monthlyPosts / 1e6) * (model.costPerMillion.posts.total ?? 0);
  return { shards, needs, beyond, model, monthly: { events, posts, total: events + posts } };
}

/**
 * The fewest shards from `from` whose cron run may purge `keysPerRun` idempotency keys, or,
 * when no count may, the fewest at the most a run purges (the target then lists the purge
 * over its headroom). Counts above `statementsPerRun` are not tried: each shard's one
 * statement would take the run past its budget of D1 queries.
 */
function keyPurgeShards(rule: KeyPurgeRule, keysPerRun: number, from: number): number {
  let best = from;
  for (let shards = from; shards <= rule.statementsPerRun; shards++) {
    const purged = keysPurgedPerRun(rule, shards);
    if (purged >= keysPerRun) return shards;
    if (purged > keysPurgedPerRun(rule, best)) best = shards;
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
