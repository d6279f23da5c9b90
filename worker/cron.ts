import { loadSettings } from './config.ts';
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
 * Most idempotency purge statements per cron run, every shard together: 900 of the 1,000
 * D1 queries one Worker invocation may make on the Paid plan, leaving 100 to the relay
 * sweep (which makes about 36 at most). With more than 90 shards each gets fewer than
 * {@link PURGE_MAX_BATCHES} (at least one).
 *
 * @internal Exported for the load model, which computes the purge from the same values.
 */
export const PURGE_MAX_STATEMENTS_PER_RUN = 900;

/**
 * The cron trigger (wrangler.toml `[triggers]`): housekeeping that must not depend on
 * traffic. First the purge of completed idempotency keys past their retention
 * (`IDEMPOTENCY_RETENTION_SEC`) in every shard `D1_SHARDS` names, retired generations
 * included: at most {@link PURGE_BATCH_SIZE} rows per statement and {@link PURGE_MAX_BATCHES}
 * statements per shard and run ({@link PURGE_MAX_STATEMENTS_PER_RUN} in all), stopping at a
 * shard's first batch that is not full. Completed keys past `expires_at` are already
 * treated as absent by the proxy; the purge only reclaims their space. In-flight claims
 * are never purged, however old: their request may have reached the payment service, and
 * a retry must find the claim to look it up. Then the relay sweeper
 * (worker/relay/sweeper.ts): overdue `pending` deliveries re-enqueued, overdue
 * confirmation checks of money events `awaiting_confirmation` enqueued (the backstop of
 * their delayed queue messages, and the only path of a step longer than Queues' 12 h
 * delay), events past `RELAY_RETENTION_DAYS` purged. With invalid settings both are skipped
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
  const batchesPerShard = Math.min(
    PURGE_MAX_BATCHES,
    Math.max(1, Math.floor(PURGE_MAX_STATEMENTS_PER_RUN / shards.length)),
  );
  let deleted = 0;
  for (const name of shards) {
    const shard = boundShard(env, name);
    // A missing binding is logged (config_invalid); the other shards are still purged.
    if (shard === undefined) continue;
    for (let batch = 0; batch < batchesPerShard; batch++) {
      const count = await purgeExpiredIdempotencyKeys(shard, now, PURGE_BATCH_SIZE);
      deleted += count;
      if (count < PURGE_BATCH_SIZE) break;
    }
  }
  logEvent('info', 'idempotency_keys_purged', { deleted, cron: controller.cron });
  await sweepRelay(env, now, settings.relayRetentionDays, settings.relayBacklogAlertSec);
  return deleted;
}

/** The D1 database bound as `name`, or `undefined` (logged) when there is none. */
function boundShard(env: Env, name: string): D1Database | undefined {
  try {
    return shardDatabase(env, name);
  } catch {
    return undefined;
  }
}
