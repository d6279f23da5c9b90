/**
 * The load model: a pure function from the measured costs (bench/scale/units.ts), the
 * published limits and prices (bench/scale/platform.ts), the number of D1 shards and the
 * retention to the rate at which each ceiling is met and the cost per million units.
 * Ceilings are rates at 100 % of a limit; the target configuration (bench/scale/target.ts)
 * keeps headroom below them.
 */
import { type Cost, eventCost, type KeyPurgeRule, type Measured, postCost } from './units.ts';

const DAY_SEC = 86_400;
const MONTH_DAYS = 30;

/** The published figures the model reads (platform.ts `LIMITS` / `PRICES`, values only). */
export interface Platform {
  readonly d1DatabaseBytes: number;
  readonly d1QueriesPerSecond: number;
  readonly queueMessagesPerSecond: number;
  readonly objectRequestsPerSecond: number;
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
  };
  readonly queueOperationsPerMessage: number;
  readonly objectBilledGb: number;
}

/** The deployment the model is asked about. */
export interface ModelOptions {
  /**
   * D1 databases (`D1_SHARDS`). Idempotency keys are spread over them; webhook events, their
   * deliveries and attempts are not yet (they stay in `DB`), so for events the model gives
   * what the design reaches once they are, and today's code holds the 1-shard figures.
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
  /** Cron runs a day (`*\/15 * * * *`: 96). */
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
 * Idempotency keys one cron run may purge over `shards` databases, as worker/cron.ts bounds
 * it: each shard gets min(`statementsPerShard`, max(1, floor(`statementsPerRun` / shards)))
 * statements of `batchSize` keys. It grows with the shards until the run's statements are
 * all used (with the cron's values, 90 shards of 10 statements), then stays at or below
 * that: the run's budget is shared, not multiplied.
 *
 * @param rule - the bounds (`measured.purge.keyPurge`).
 * @param shards - the number of databases, at least 1.
 * @returns keys per run at most.
 */
export function keysPurgedPerRun(rule: KeyPurgeRule, shards: number): number {
  const perShard = Math.min(
    rule.statementsPerShard,
    Math.max(1, Math.floor(rule.statementsPerRun / shards)),
  );
  return shards * perShard * rule.batchSize;
}

/** The shard count past which the key purge's statements per shard shrink. */
const keyPurgeFullShards = (rule: KeyPurgeRule) =>
  Math.floor(rule.statementsPerRun / rule.statementsPerShard);

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
  const event = eventCost(measured, options.subscriptionsPerEvent, options.consumerBatchSize);
  const post = postCost(measured);
  const keySeconds = options.idempotencyRetentionSec;
  const { purge } = measured;
  const ceilings: Ceiling[] = [
    {
      name: `D1 size, ${options.retentionDays} days of events, ${keySeconds / 3600} h of keys`,
      limit: `${platform.d1DatabaseBytes / 1e9} GB per database`,
      use: `${Math.round(event.d1Bytes).toLocaleString('en-US')} B per event, ${Math.round(post.d1Bytes)} B per POST`,
      eventsPerDay: per(n * platform.d1DatabaseBytes, event.d1Bytes * options.retentionDays),
      postsPerSecond: per(n * platform.d1DatabaseBytes, post.d1Bytes * keySeconds),
      perShard: true,
    },
    {
      name: 'D1 query rate (one thread per database)',
      limit: `${platform.d1QueriesPerSecond} queries/s per database`,
      use: `${fixed(event.d1Statements)} queries per event, ${fixed(post.d1Statements)} per POST`,
      eventsPerDay: per(n * platform.d1QueriesPerSecond * DAY_SEC, event.d1Statements),
      postsPerSecond: per(n * platform.d1QueriesPerSecond, post.d1Statements),
      perShard: true,
    },
    {
      // Measured on one database; the event purge is not per shard yet (events stay in DB).
      name: 'Retention purge of events (bounded per cron run)',
      limit: `${purge.eventsPurged} events per run, ${options.cronRunsPerDay} runs a day`,
      use: '1 event',
      eventsPerDay: n * purge.eventsPurged * options.cronRunsPerDay,
      postsPerSecond: null,
      perShard: true,
    },
    {
      // From worker/cron.ts's bounds: not a multiple of the shards past the full ones.
      name: `Retention purge of idempotency keys (rises with shards up to ${keyPurgeFullShards(purge.keyPurge)})`,
      limit: `${purge.keyPurge.batchSize} keys per statement, min(${purge.keyPurge.statementsPerShard}, max(1, floor(${purge.keyPurge.statementsPerRun} / N))) statements per shard and run, ${options.cronRunsPerDay} runs a day`,
      use: '1 key',
      eventsPerDay: null,
      postsPerSecond: (keysPurgedPerRun(purge.keyPurge, n) * options.cronRunsPerDay) / DAY_SEC,
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
    const requests = cost.limiterRequests + cost.deliveries * cost.outboxRequestsPerDelivery;
    const objects =
      requests * price.objectRequest +
      (objectActiveMs / 1000) * platform.objectBilledGb * price.objectGbSecond +
      cost.outboxRowsRead * price.objectRowRead +
      cost.outboxRowsWritten * price.objectRowWritten;
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
    event.deliveries * assumed.outboxActiveMsPerDelivery;
  return {
    events: million(event, options.retentionDays, eventActiveMs),
    posts: million(
      post,
      options.idempotencyRetentionSec / DAY_SEC,
      post.limiterRequests * assumed.limiterActiveMs,
    ),
  };
}
