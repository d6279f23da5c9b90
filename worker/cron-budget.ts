/**
 * How one cron run shares the D1 queries a Worker invocation may make (1,000 on the Paid
 * plan) between its parts, however many shards `D1_SHARDS` names: the purge of expired
 * idempotency keys, the relay's backlog check, its claims of overdue deliveries and
 * confirmation checks, and its retention purges of events and recovery jobs. Every part
 * that runs per shard gets a fixed number of statements per shard, so the sum of the parts'
 * maxima stays under the limit. When the shards are too many for every one to get its
 * minimum in one run, a run visits as many as fit, starting where the previous run stopped
 * (by the run's scheduled time), so every shard is reached within a few runs.
 */

/**
 * D1 queries one Worker invocation may make on the Paid plan.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const INVOCATION_QUERY_LIMIT = 1000;

/**
 * Queries kept free of the plan: room for what is not counted here (a retried statement, a
 * part that grows by one) so a run never reaches the limit.
 */
const QUERY_MARGIN = 10;

/**
 * The backlog alert's queries beyond one read per shard: the subscriptions' snapshot and the
 * alert's insert and fan-out (worker/relay/operational-alerts.ts).
 */
const BACKLOG_ALERT_QUERIES = 3;

/** The purge of finished recovery jobs: one statement, on `DB`. */
const RECOVERY_JOB_PURGE_QUERIES = 1;

/**
 * The least a visited shard costs: one idempotency purge statement, the claim of its overdue
 * deliveries, the claim of its overdue confirmation checks, one event purge statement.
 */
const VISIT_QUERIES = 4;

/** Most purge statements per shard and run, for keys and for events alike (as with one shard). */
const MAX_PURGE_STATEMENTS_PER_SHARD = 10;

/** Overdue deliveries (and, apart, confirmation checks) claimed per shard with few shards. */
const CLAIM_LIMIT_PER_SHARD = 500;

/**
 * Overdue deliveries (and, apart, checks) re-enqueued per run, every shard together, once
 * the shards are many: 100 queue sends of 100 messages at most, each kind. Ten times what
 * one database's run took before events were spread.
 */
const CLAIMS_PER_RUN = 5000;

/** The least a visited shard claims, however many shards. */
const MIN_CLAIM_LIMIT_PER_SHARD = 10;

/** One cron run's plan, for a given number of shards. */
export interface CronPlan {
  /** Shards visited this run (all of them unless they are too many), at least 1. */
  readonly shardsPerRun: number;
  /** Idempotency purge statements per visited shard (1 to 10). */
  readonly keyStatementsPerShard: number;
  /**
   * Event purge statements per visited shard (1 to 10); what the key purge did not use is
   * added in the run (see {@link eventPurgeStatements}).
   */
  readonly eventStatementsPerShard: number;
  /** Overdue deliveries claimed per visited shard, and overdue checks apart. */
  readonly claimLimitPerShard: number;
  /** The most D1 queries the run makes, every part at its maximum: under the limit. */
  readonly maxQueries: number;
}

/**
 * The plan of one cron run over `shardCount` shards. With one shard it is the run as it was
 * before shards: 10 key purge statements, 10 event purge statements, 500 claims of each kind.
 * Otherwise the queries left after the backlog check (one per shard, plus 3) and the recovery
 * job purge go first to one visit of as many shards as fit (4 queries each), then the rest
 * is split evenly between the key and event purges of the visited shards, at most 10 each.
 *
 * @param shardCount - every shard of every generation (worker/db/shards.ts `everyShard`),
 *   at least 1.
 * @throws {RangeError} when `shardCount` is not a positive integer.
 */
export function planCronRun(shardCount: number): CronPlan {
  if (!Number.isSafeInteger(shardCount) || shardCount < 1) {
    throw new RangeError('the shard count must be a positive integer');
  }
  const fixed = shardCount + BACKLOG_ALERT_QUERIES + RECOVERY_JOB_PURGE_QUERIES;
  const available = INVOCATION_QUERY_LIMIT - QUERY_MARGIN - fixed;
  // At least one, even past the point where nothing fits (some thousand shards): a run still
  // makes progress, and the rotation still reaches every shard.
  const shardsPerRun = Math.max(1, Math.min(shardCount, Math.floor(available / VISIT_QUERIES)));
  const extraPerShard = Math.max(
    0,
    Math.floor((available - shardsPerRun * VISIT_QUERIES) / 2 / shardsPerRun),
  );
  const statements = Math.min(MAX_PURGE_STATEMENTS_PER_SHARD, 1 + extraPerShard);
  const claimLimitPerShard = Math.min(
    CLAIM_LIMIT_PER_SHARD,
    Math.max(MIN_CLAIM_LIMIT_PER_SHARD, Math.floor(CLAIMS_PER_RUN / shardsPerRun)),
  );
  return {
    shardsPerRun,
    keyStatementsPerShard: statements,
    eventStatementsPerShard: statements,
    claimLimitPerShard,
    maxQueries: fixed + shardsPerRun * (2 + 2 * statements),
  };
}

/**
 * The event purge statements each visited shard may make in a run, once the key purge is
 * done: its own share plus an even part of what the key purge left unused (a shard whose
 * keys were all purged early gives its statements to the events), at most 10.
 *
 * @param plan - from {@link planCronRun}.
 * @param visited - shards visited this run.
 * @param keyStatementsUsed - statements the key purge made this run.
 */
export function eventPurgeStatements(
  plan: CronPlan,
  visited: number,
  keyStatementsUsed: number,
): number {
  const unused = Math.max(0, visited * plan.keyStatementsPerShard - keyStatementsUsed);
  return Math.min(
    MAX_PURGE_STATEMENTS_PER_SHARD,
    plan.eventStatementsPerShard + Math.floor(unused / Math.max(1, visited)),
  );
}

/** The cron's period when its expression does not say one (wrangler.toml runs every 15 minutes). */
const DEFAULT_PERIOD_MS = 15 * 60_000;

/**
 * The period of a cron expression, in milliseconds: `*\/M * * * *` runs every M minutes,
 * `* * * * *` every minute; any other form is taken as every 15 minutes (wrangler.toml's).
 *
 * @param cron - the expression the run was scheduled by; `undefined`: 15 minutes.
 */
export function cronPeriodMs(cron: string | undefined): number {
  const text = cron?.trim() ?? '';
  if (text === '* * * * *') return 60_000;
  const every = /^\*\/(\d{1,2}) \* \* \* \*$/.exec(text);
  const minutes = every === null ? 0 : Number(every[1]);
  return minutes >= 1 && minutes <= 59 ? minutes * 60_000 : DEFAULT_PERIOD_MS;
}

/**
 * The shards one run visits: `count` of them in order, starting where the previous run (one
 * period earlier) stopped and wrapping around, so consecutive runs cover every shard in turn
 * and none waits more than `ceil(shards / count)` runs. All of them when `count` covers them.
 *
 * @param shards - every shard, in a fixed order.
 * @param count - shards per run ({@link CronPlan.shardsPerRun}).
 * @param scheduledTime - the run's scheduled time, epoch ms.
 * @param periodMs - the cron's period ({@link cronPeriodMs}).
 */
export function shardsOfRun<T>(
  shards: readonly T[],
  count: number,
  scheduledTime: number,
  periodMs: number,
): readonly T[] {
  if (count >= shards.length) return shards;
  const total = shards.length;
  // Reduced first, so the product stays a small integer whatever the time.
  const run = ((Math.floor(scheduledTime / periodMs) % total) + total) % total;
  const start = (run * count) % total;
  return Array.from({ length: count }, (_, index) => shards[(start + index) % total] as T);
}
