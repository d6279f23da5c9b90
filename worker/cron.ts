import { loadSettings } from './config.ts';
import { cronPeriodMs, eventPurgeStatements, planCronRun, shardsOfRun } from './cron-budget.ts';
import type { EventShard } from './db/event-shards.ts';
import { purgeExpiredIdempotencyKeys } from './db/idempotency-keys.ts';
import { shardDatabase } from './db/shard-bindings.ts';
import { everyShard } from './db/shards.ts';
import { logEvent } from './http/log.ts';
import { sweepRelay } from './relay/sweeper.ts';

/**
 * Rows deleted per statement by the purge (one D1 statement each).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const PURGE_BATCH_SIZE = 500;

/**
 * Most purge statements per shard and cron run, so one run stays short; the next continues.
 *
 * @internal Exported for the load model, which computes the purge from the same values.
 */
export const PURGE_MAX_BATCHES = 10;

/**
 * Most idempotency purge statements per cron run, every shard together (at least one per
 * shard). Since the relay's events are spread over the same shards, the run's plan
 * (worker/cron-budget.ts `planCronRun`) gives the key purge a lower share once there are more
 * than a few dozen shards; this bound is the outer one.
 *
 * @internal Exported for the load model, which computes the purge from the same values.
 */
export const PURGE_MAX_STATEMENTS_PER_RUN = 900;

/**
 * The cron trigger (wrangler.toml `[triggers]`): housekeeping that must not depend on
 * traffic. First the purge of completed idempotency keys past their retention
 * (`IDEMPOTENCY_RETENTION_SEC`) in every shard `D1_SHARDS` names, retired generations
 * included: at most {@link PURGE_BATCH_SIZE} rows per statement and {@link PURGE_MAX_BATCHES}
 * statements per shard and run ({@link PURGE_MAX_STATEMENTS_PER_RUN} in all, and no more than
 * the run's plan gives the keys), stopping at a shard's first batch that is not full. Completed keys past `expires_at` are already
 * treated as absent by the proxy; the purge only reclaims their space. In-flight claims
 * are never purged, however old: their request may have reached the payment service, and
 * a retry must find the claim to look it up. Then the relay sweeper
 * (worker/relay/sweeper.ts): overdue `pending` deliveries re-enqueued, overdue
 * confirmation checks of money events `awaiting_confirmation` enqueued (the backstop of
 * their delayed queue messages, and the only path of a step longer than Queues' 12 h
 * delay), events past `RELAY_RETENTION_DAYS` purged, in every event shard, the event purge
 * taking what the key purge left of its share. The whole run stays under the 1,000 D1 queries
 * of one invocation however many shards (worker/cron-budget.ts): when they are too many for
 * one run, a run visits as many as fit and the next run continues with the following ones
 * (by the scheduled time and the period of `controller.cron`). With invalid settings both are skipped
 * (and logged): which databases hold keys is a setting, nothing is purged by a retention
 * the operator did not set, and deliveries wait, `pending`, for the fix.
 *
 * @param controller - the scheduled event; its `scheduledTime` (epoch ms) is "now".
 * @param env - bindings (the D1 databases, Queue `DELIVERIES`) and settings.
 * @returns how many idempotency keys were deleted.
 * @throws whatever the relay sweep throws (after the idempotency purge is done).
 */
export async function runScheduled(controller: ScheduledController, env: Env): Promise<number> {
  const now = controller.scheduledTime;
  const loaded = loadSettings(env);
  if (!loaded.ok) {
    logEvent('error', 'idempotency_purge_skipped', { reason: 'configuration_error' });
    logEvent('error', 'relay_sweep_skipped', { reason: 'configuration_error' });
    return 0;
  }
  const { settings } = loaded;
  const shards = everyShard(settings.shards);
  const plan = planCronRun(shards.length);
  const visited = shardsOfRun(shards, plan.shardsPerRun, now, cronPeriodMs(controller.cron));
  const batchesPerShard = Math.min(plan.keyStatementsPerShard, keyBatchesPerShard(shards.length));
  let deleted = 0;
  let statements = 0;
  for (const name of visited) {
    const shard = boundShard(env, name);
    // A missing binding is logged (config_invalid); the other shards are still purged.
    if (shard === undefined) continue;
    for (let batch = 0; batch < batchesPerShard; batch++) {
      const count = await purgeExpiredIdempotencyKeys(shard, now, PURGE_BATCH_SIZE);
      deleted += count;
      statements += 1;
      if (count < PURGE_BATCH_SIZE) break;
    }
  }
  logEvent('info', 'idempotency_keys_purged', { deleted, cron: controller.cron });
  await sweepRelay(env, now, settings.relayRetentionDays, settings.relayBacklogAlertSec, {
    shards: visited.flatMap((name) => boundEventShard(env, name)),
    claimLimit: plan.claimLimitPerShard,
    purgeStatementsPerShard: eventPurgeStatements(plan, visited.length, statements),
  });
  return deleted;
}

/**
 * The idempotency purge's own bound per shard ({@link PURGE_MAX_STATEMENTS_PER_RUN} split over
 * the shards, at least one each); the run's plan may lower it further.
 */
function keyBatchesPerShard(shardCount: number): number {
  return Math.min(
    PURGE_MAX_BATCHES,
    Math.max(1, Math.floor(PURGE_MAX_STATEMENTS_PER_RUN / shardCount)),
  );
}

/** The event shard bound as `name`, or none when there is no such binding (logged). */
function boundEventShard(env: Env, name: string): EventShard[] {
  const db = boundShard(env, name);
  return db === undefined ? [] : [{ name, db }];
}

/** The D1 database bound as `name`, or `undefined` (logged) when there is none. */
function boundShard(env: Env, name: string): D1Database | undefined {
  try {
    return shardDatabase(env, name);
  } catch {
    return undefined;
  }
}
