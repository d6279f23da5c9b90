import { loadSettings } from './config.ts';
import { cronPeriodMs, eventPurgeStatements, planCronRun, shardsOfRun } from './cron-budget.ts';
import type { EventShard } from './db/event-shards.ts';
import { shardDatabase } from './db/shard-bindings.ts';
import { everyShard } from './db/shards.ts';
import { logEvent } from './http/log.ts';
import { sweepRelay } from './relay/sweeper.ts';

/**
 * The cron trigger (wrangler.toml `[triggers]`): the relay's housekeeping that must not
 * depend on traffic (worker/relay/sweeper.ts): overdue `pending` deliveries re-enqueued,
 * overdue confirmation checks of money events `awaiting_confirmation` enqueued (the
 * backstop of their delayed queue messages, and the only path of a step longer than
 * Queues' 12 h delay), events past `RELAY_RETENTION_DAYS` purged, in every event shard. The
 * whole run stays under the 1,000 D1 queries of one invocation however many shards
 * (worker/cron-budget.ts): when they are too many for one run, a run visits as many as fit
 * and the next run continues with the following ones (by the scheduled time and the period
 * of `controller.cron`). With invalid settings the sweep is skipped (and logged):
 * deliveries wait, `pending`, for the fix. Idempotency keys expire on their own (their
 * objects' alarms, worker/objects/idempotency-keys.ts).
 *
 * @param controller - the scheduled event; its `scheduledTime` (epoch ms) is "now".
 * @param env - bindings (the D1 databases, Queue `DELIVERIES`) and settings.
 * @throws whatever the relay sweep throws.
 */
export async function runScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const now = controller.scheduledTime;
  const loaded = loadSettings(env);
  if (!loaded.ok) {
    logEvent('error', 'relay_sweep_skipped', { reason: 'configuration_error' });
    return;
  }
  const { settings } = loaded;
  const shards = everyShard(settings.shards);
  const plan = planCronRun(shards.length);
  const visited = shardsOfRun(shards, plan.shardsPerRun, now, cronPeriodMs(controller.cron));
  await sweepRelay(env, now, settings.relayRetentionDays, settings.relayBacklogAlertSec, {
    shards: visited.flatMap((name) => boundEventShard(env, name)),
    claimLimit: plan.claimLimitPerShard,
    purgeStatementsPerShard: eventPurgeStatements(plan, visited.length, 0),
  });
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
