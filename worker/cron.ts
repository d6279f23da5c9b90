import { loadSettings } from './config.ts';
import { purgeExpiredIdempotencyKeys } from './db/idempotency-keys.ts';
import { logEvent } from './http/log.ts';
import { sweepRelay } from './relay/sweeper.ts';

/**
 * Rows deleted per statement by the purge (one D1 statement each).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const PURGE_BATCH_SIZE = 500;

/** Most purge statements per cron run, so one run stays short; the next run continues. */
const PURGE_MAX_BATCHES = 10;

/**
 * The cron trigger (wrangler.toml `[triggers]`): housekeeping that must not depend on
 * traffic. Today: purge completed idempotency keys past their retention
 * (`IDEMPOTENCY_RETENTION_SEC`), at most {@link PURGE_BATCH_SIZE} x
 * {@link PURGE_MAX_BATCHES} rows per run, stopping at the first batch that is not full.
 * Completed keys past `expires_at` are already treated as absent by the proxy; the purge
 * only reclaims their space. In-flight claims are never purged, however old: their request
 * may have reached the payment service, and a retry must find the claim to look it up. Then
 * the relay sweeper (worker/relay/sweeper.ts): overdue
 * `pending` deliveries re-enqueued, overdue confirmation checks of money events
 * `awaiting_confirmation` enqueued (the backstop of their delayed queue messages, and the
 * only path of a step longer than Queues' 12 h delay), events past `RELAY_RETENTION_DAYS`
 * purged. With
 * invalid settings the relay sweep is skipped (and logged): nothing is purged by a
 * retention the operator did not set, and deliveries wait, `pending`, for the fix.
 *
 * @param controller - the scheduled event; its `scheduledTime` (epoch ms) is "now".
 * @param env - bindings (D1 `DB`, Queue `DELIVERIES`) and settings.
 * @returns how many idempotency keys were deleted.
 * @throws whatever the relay sweep throws (after the idempotency purge is done).
 */
export async function runScheduled(controller: ScheduledController, env: Env): Promise<number> {
  const now = controller.scheduledTime;
  let deleted = 0;
  for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
    const count = await purgeExpiredIdempotencyKeys(env.DB, now, PURGE_BATCH_SIZE);
    deleted += count;
    if (count < PURGE_BATCH_SIZE) break;
  }
  logEvent('info', 'idempotency_keys_purged', { deleted, cron: controller.cron });
  const loaded = loadSettings(env);
  if (loaded.ok)
    await sweepRelay(
      env,
      now,
      loaded.settings.relayRetentionDays,
      loaded.settings.relayBacklogAlertSec,
    );
  else logEvent('error', 'relay_sweep_skipped', { reason: 'configuration_error' });
  return deleted;
}
