/**
 * The load model: a pure function from the measured costs (bench/scale/units.ts), the
 * published limits and prices (bench/scale/platform.ts), the number of D1 shards and the
 * retention to the rate at which each ceiling is met and the cost per million units.
 * Ceilings are rates at 100 % of a limit; the target configuration (bench/scale/target.ts)
 * keeps headroom below them.
 */
import { eventPurgeStatements, planCronRun } from '../../worker/cron-budget.ts';
import { KEY_BUCKETS } from '../../worker/objects/buckets.ts';
import { type Cost, eventCost, type Measured, postCost } from './units.ts';

const DAY_SEC = 86_400;
const MONTH_DAYS = 30;

/** The published figures the model reads (platform.ts `LIMITS` / `PRICES`, values only). */
export interface Platform {
  readonly d1DatabaseBytes: number;
  readonly d1QueriesPerSecond: number;
  readonly queueMessagesPerSecond: number;
  readonly objectRequestsPerSecond: number;
  readonly objectStorageBytes: number;
  readonly price: {
    readonly workersRequest: number;
    readonly workersCpuMs: number;
    readonly d1RowRead: number;
    readonly d1RowWritten: number;
    readonly d1GbMonth: number;
    readonly queueOperation: number;
    readonly objectRequest: number;
    readonly objectGbSecond: number;
    readonly objectRowRead: number;
    readonly objectRowWritten: number;
    readonly objectGbMonth: number;
  };
  readonly queueOperationsPerMessage: number;
  readonly objectBilledGb: number;
}

/** The deployment the model is asked about. */
export interface ModelOptions {
  /**
   * D1 databases (`D1_SHARDS`, one generation). Webhook events (with their deliveries and
   * attempts) are spread over them; subscriptions, and what an event on another shard still
   * reads and writes of them, stay in `DB`. Idempotency keys are in their own objects.
   */
  readonly shards: number;
  /** `RELAY_RETENTION_DAYS`. */
  readonly retentionDays: number;
  /** `IDEMPOTENCY_RETENTION_SEC`. */
  readonly idempotencyRetentionSec: number;
  /** Matching subscriptions per event. */
  readonly subscriptionsPerEvent: number;
  /** The consumer's `max_batch_size`. */
  readonly consumerBatchSize: number;
  /** Cron runs a day (`*\/15 * * * *`: 96; `*\/5 * * * *`: 288). */
  readonly cronRunsPerDay: number;
  /**
   * `RATE_LIMIT_PER_OBJECT_PER_MINUTE`: what one limiter object counts. A sender whose limit
   * is above it is counted in as many objects as the limit needs, so the limiter's own rate
   * never caps a sender below its configured limit.
   */
  readonly limiterPerObjectPerMinute: number;
  /** Figures the platform does not publish and the run does not measure (docs/assumptions.md). */
  readonly assumed: {
    /** CPU milliseconds per Worker invocation. */
    readonly cpuMsPerInvocation: number;
    /** How long an outbox stays active per delivery (the subscriber's answer), in ms. */
    readonly outboxActiveMsPerDelivery: number;
    /** How long a limiter object stays active per request, in ms. */
    readonly limiterActiveMs: number;
    /** How long an idempotency key object stays active per request, in ms. */
    readonly keyObjectActiveMs: number;
    /** How long one consumer invocation lasts (a batch handed to its outboxes), in ms. */
    readonly consumerInvocationMs: number;
  };
}

/** One ceiling: the rate of events or POSTs at which a limit is met. */
interface Ceiling {
  readonly name: string;
  /** The limit, as published or configured. */
  readonly limit: string;
  /** What one event (or POST) uses of it. */
  readonly use: string;
  /** Events a day at the limit; `null` when events do not use it. */
  readonly eventsPerDay: number | null;
  /** Idempotent POSTs a second at the limit; `null` when POSTs do not use it. */
  readonly postsPerSecond: number | null;
  /** Whether the ceiling rises with the number of shards. */
  readonly perShard: boolean;
}

/** What the model says for one deployment. */
export interface ModelResult {
  readonly options: ModelOptions;
  readonly event: Cost;
  readonly post: Cost;
  readonly ceilings: readonly Ceiling[];
  /** Dollars per million events (with their deliveries) and per million POSTs, by item. */
  readonly costPerMillion: {
    readonly events: Readonly<Record<string, number>>;
    readonly posts: Readonly<Record<string, number>>;
  };
}

const per = (numerator: number, denominator: number): number | null =>
  denominator > 0 ? numerator / denominator : null;

const fixed = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/**
 * Events one cron run may purge over `shards` databases: the event purge statements each
 * visited shard gets (worker/cron-budget.ts; with no key purge any more, the plan's key share
 * goes to the events too, as worker/cron.ts passes it), each deleting as many events as one
 * statement did in the measured run.
 *
 * @param eventsPurged - events the measured one-shard run purged (`measured.purge`).
 * @param shards - the number of databases, at least 1.
 * @returns events per run at most.
 */
export function eventsPurgedPerRun(eventsPurged: number, shards: number): number {
  const perStatement = eventsPerPurgeStatement(eventsPurged);
  const plan = planCronRun(shards);
  return plan.shardsPerRun * eventPurgeStatements(plan, plan.shardsPerRun, 0) * perStatement;
}

/**
 * Events one purge statement deletes: what the measured one-shard cron run purged, over the
 * statements a run gives one shard.
 *
 * @param eventsPurged - events the measured run purged (`measured.purge`).
 */
export function eventsPerPurgeStatement(eventsPurged: number): number {
  const plan = planCronRun(1);
  return eventsPurged / eventPurgeStatements(plan, 1, 0);
}

/**
 * Runs the model.
 *
 * @param measured - the measurements.
 * @param platform - the published limits and prices.
 * @param options - shards, retentions, fan-out and the assumptions.
 * @returns the ceilings and the cost per million events and POSTs.
 * @throws {Error} when `shards` is not a whole number of at least 1.
 */
export function runModel(
  measured: Measured,
  platform: Platform,
  options: ModelOptions,
): ModelResult {
  if (!Number.isInteger(options.shards) || options.shards < 1) {
    throw new Error(`shards must be a whole number of at least 1, got ${options.shards}`);
  }
  const n = options.shards;
  const event = eventCost(measured, options.subscriptionsPerEvent, options.consumerBatchSize, n);
  const post = postCost(measured);
  const onDb = (shards: number) =>
    eventCost(measured, options.subscriptionsPerEvent, options.consumerBatchSize, shards)
      .d1StatementsOnDb;
  const keySeconds = options.idempotencyRetentionSec;
  const { purge } = measured;
  const ceilings: Ceiling[] = [
    {
      name: `D1 size, ${options.retentionDays} days of events`,
      limit: `${platform.d1DatabaseBytes / 1e9} GB per database`,
      use: `${Math.round(event.d1Bytes).toLocaleString('en-US')} B per event`,
      eventsPerDay: per(n * platform.d1DatabaseBytes, event.d1Bytes * options.retentionDays),
      postsPerSecond: null,
      perShard: true,
    },
    {
      // With one shard, DB's; with more, a shard other than DB (DB's is the next row).
      name: "D1 query rate of a shard's own events (one thread per database)",
      limit: `${platform.d1QueriesPerSecond} queries/s per database`,
      use: `${fixed(eventCost(measured, options.subscriptionsPerEvent, options.consumerBatchSize, 2).d1StatementsAtHome)} queries per event on a shard but DB (${fixed(eventCost(measured, options.subscriptionsPerEvent, options.consumerBatchSize, 1).d1Statements)} in DB alone), ${fixed(post.d1Statements)} per POST`,
      eventsPerDay: per(n * platform.d1QueriesPerSecond * DAY_SEC, event.d1StatementsAtHome),
      postsPerSecond: per(n * platform.d1QueriesPerSecond, post.d1Statements),
      perShard: true,
    },
    {
      // Subscriptions stay in DB; the fan-out and the attempts read copies of them, and the
      // health is written there only when it changes, so an event stored elsewhere costs DB
      // about nothing.
      name: 'D1 query rate of DB (subscriptions; their copies refreshed from it)',
      limit: `${platform.d1QueriesPerSecond} queries/s`,
      use: `per event ${fixed(onDb(1))} with 1 shard, ${fixed(onDb(2))} with 2, ${fixed(onDb(1e9))} with many; ${fixed(post.d1Statements)} per POST`,
      eventsPerDay: per(platform.d1QueriesPerSecond * DAY_SEC, event.d1StatementsOnDb),
      postsPerSecond: per(n * platform.d1QueriesPerSecond, post.d1Statements),
      perShard: false,
    },
    {
      // worker/cron-budget.ts: the run's 1,000 D1 queries are shared by every shard.
      name: 'Retention purge of events (one cron run, every shard together)',
      limit: `${fixed(eventsPerPurgeStatement(purge.eventsPurged))} events a statement, planCronRun(N) statements per shard (10 up to 42 shards), ${options.cronRunsPerDay} runs a day`,
      use: '1 event',
      eventsPerDay: eventsPurgedPerRun(purge.eventsPurged, n) * options.cronRunsPerDay,
      postsPerSecond: null,
      perShard: false,
    },
    {
      // Keys spread evenly over the objects by their hash.
      name: `Idempotency key objects, request rate (${KEY_BUCKETS} objects)`,
      limit: `${platform.objectRequestsPerSecond} requests/s per object`,
      use: `${fixed(post.keyRequests)} requests per POST`,
      eventsPerDay: null,
      postsPerSecond: per(KEY_BUCKETS * platform.objectRequestsPerSecond, post.keyRequests),
      perShard: false,
    },
    {
      name: `Idempotency key objects, storage, ${keySeconds / 3600} h of keys (${KEY_BUCKETS} objects)`,
      limit: `${platform.objectStorageBytes / 1e9} GB per object`,
      use: `${Math.round(post.keyBytes)} B per key`,
      eventsPerDay: null,
      postsPerSecond: per(KEY_BUCKETS * platform.objectStorageBytes, post.keyBytes * keySeconds),
      perShard: false,
    },
    {
      name: 'Queue throughput (one queue)',
      limit: `${platform.queueMessagesPerSecond} messages/s per queue`,
      use: `messages per event: ${fixed(event.queueMessages)}`,
      eventsPerDay: per(platform.queueMessagesPerSecond * DAY_SEC, event.queueMessages),
      postsPerSecond: null,
      perShard: false,
    },
    {
      name: 'Outbox object of one subscription',
      limit: `${platform.objectRequestsPerSecond} requests/s per object`,
      use: `requests per delivery: ${fixed(event.outboxRequestsPerDelivery)}`,
      eventsPerDay: per(
        platform.objectRequestsPerSecond * DAY_SEC,
        event.outboxRequestsPerDelivery,
      ),
      postsPerSecond: null,
      perShard: false,
    },
    {
      // No ceiling: a sender's limit above one object's share is spread over more objects.
      name: 'Limiter objects of one sender (webhook address, or caller)',
      limit: `${options.limiterPerObjectPerMinute / 60} requests/s per object, objects added with the configured limit`,
      use: `${fixed(event.limiterRequests)} per event, ${fixed(post.limiterRequests)} per POST`,
      eventsPerDay: null,
      postsPerSecond: null,
      perShard: false,
    },
  ];
  return { options, event, post, ceilings, costPerMillion: costs(event, post, platform, options) };
}

// Dollars per million units by item, usage above the plan's included amounts.
function costs(event: Cost, post: Cost, platform: Platform, options: ModelOptions) {
  const { price } = platform;
  const { assumed } = options;
  const million = (cost: Cost, retentionDays: number, objectActiveMs: number) => {
    const workers =
      cost.workerInvocations *
      (price.workersRequest + assumed.cpuMsPerInvocation * price.workersCpuMs);
    const d1Rows = cost.d1RowsRead * price.d1RowRead + cost.d1RowsWritten * price.d1RowWritten;
    // Each unit's bytes are kept for the retention: GB-months per unit.
    const d1Storage = (cost.d1Bytes / 1e9) * (retentionDays / MONTH_DAYS) * price.d1GbMonth;
    const queues = cost.queueMessages * platform.queueOperationsPerMessage * price.queueOperation;
    const requests =
      cost.limiterRequests +
      cost.deliveries * cost.outboxRequestsPerDelivery +
      cost.keyRequests +
      cost.eventObjectRequests;
    const objects =
      requests * price.objectRequest +
      (objectActiveMs / 1000) * platform.objectBilledGb * price.objectGbSecond +
      (cost.outboxRowsRead + cost.keyRowsRead) * price.objectRowRead +
      (cost.outboxRowsWritten + cost.keyRowsWritten) * price.objectRowWritten +
      (cost.keyBytes / 1e9) * (retentionDays / MONTH_DAYS) * price.objectGbMonth;
    const items = {
      'Workers requests and CPU': workers,
      'D1 rows read and written': d1Rows,
      'D1 storage': d1Storage,
      Queues: queues,
      'Durable Objects': objects,
    };
    const scaled = Object.fromEntries(Object.entries(items).map(([k, v]) => [k, v * 1e6]));
    return { ...scaled, total: Object.values(scaled).reduce((a, b) => a + b, 0) };
  };
  const eventActiveMs =
    event.limiterRequests * assumed.limiterActiveMs +
    event.deliveries * assumed.outboxActiveMsPerDelivery +
    event.eventObjectRequests * assumed.keyObjectActiveMs;
  return {
    events: million(event, options.retentionDays, eventActiveMs),
    posts: million(
      post,
      options.idempotencyRetentionSec / DAY_SEC,
      post.limiterRequests * assumed.limiterActiveMs + post.keyRequests * assumed.keyObjectActiveMs,
    ),
  };
}
