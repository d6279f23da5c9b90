/**
 * The target configuration of the load model: the fewest D1 shards that carry a given event
 * rate, retention and POST rate with headroom below every per-shard ceiling (events and keys
 * share the shards' size, query thread and purge), the ceilings that shards do not raise, and
 * the monthly cost. Pure, like bench/scale/model.ts.
 */
import { type ModelOptions, type ModelResult, type Platform, runModel } from './model.ts';
import type { Measured } from './units.ts';

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
    'Retention purge, keys': Math.ceil(
      (target.averagePostsPerSecond * DAY_SEC) / usable(measured.purge.keysPurged * purgeRuns),
    ),
  };
  const shards = Math.max(1, ...Object.values(needs));
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
 * The share of one limiter object's documented rate that a sender sending `perSecond`
 * requests uses, its limit set to that rate: the limit is spread over
 * ceil(limit / `limiterPerObjectPerMinute`) objects, each taking its share.
 */
function limiterUse(perSecond: number, options: ModelOptions, platform: Platform): number {
  const objects = Math.max(1, Math.ceil((perSecond * 60) / options.limiterPerObjectPerMinute));
  return perSecond / objects / platform.objectRequestsPerSecond;
}
