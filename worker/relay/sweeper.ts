/**
 * The relay's sweeper, run by the cron trigger: heals deliveries that were stored but
 * never enqueued (a crash or a Queues failure between the D1 write and `sendBatch` at
 * ingress) or whose message got lost past its due time, starts the confirmation checks of
 * money events that are overdue (a lost re-check message, or a step longer than Queues can
 * delay), purges events and finished recovery jobs past retention, and raises
 * `relay.backlog` when the oldest due delivery has waited too long. It does so in every event
 * shard the run visits (worker/cron-budget.ts decides which, and how much in each), and what
 * it enqueues names the shard the row is in.
 */
import { loadSettings } from '../config.ts';
import { claimOverdueDeliveries, type DeliveryTarget } from '../db/deliveries.ts';
import { type ClaimedCheck, claimOverdueChecks } from '../db/event-confirmation.ts';
import {
  type EventShard,
  eventShardNamed,
  everyEventShard,
  MAIN_SHARD,
} from '../db/event-shards.ts';
import { purgeRecoveryJobsBefore } from '../db/recovery-jobs.ts';
import { purgeWebhookEventsBefore } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { type ConfirmationMessage, confirmationMessage } from './confirmation-check.ts';
import { enqueueDeliveryTargets, sendInBatches } from './enqueue.ts';
import { announceBacklog } from './operational-alerts.ts';
import { ShardSweep } from './sweep-shards.ts';

/**
 * How long past its due time a `pending` delivery may wait before the sweeper
 * re-enqueues it, in milliseconds (10 minutes). Much longer than the queue's batch
 * timeout (1-5 s) plus one attempt (15 s), so a message that is merely in flight is
 * rarely re-sent; a re-send is harmless anyway (the consumer skips settled deliveries).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const SWEEP_GRACE_MS = 10 * 60 * 1000;

/**
 * Most deliveries re-enqueued per shard and run outside the cron's plan (one claim
 * statement); the next run continues.
 */
const SWEEP_BATCH_SIZE = 500;

/**
 * Events deleted per purge statement: their deliveries and attempts cascade in the same
 * statement, a few thousand rows at most.
 */
const EVENT_PURGE_BATCH_SIZE = 500;

/**
 * Purge statements per shard and run outside the cron's plan. A cron run is one Worker
 * invocation, which may make at most 50 D1 queries on the Free plan (1,000 on Paid): with one
 * database, the idempotency purge (at most 10), this purge (at most 10), the claims and the
 * backlog check stay below 50 (docs/architecture.md, "Retention purge"); with several, the
 * cron's plan shares the 1,000 (worker/cron-budget.ts). A backlog is worked off over later runs.
 */
const PURGE_STATEMENTS_PER_SHARD = 10;

/** Bounds of one run of {@link purgeExpiredEvents}. */
interface PurgeLimits {
  /** Events deleted per statement, at least 1. */
  readonly batchSize: number;
  /** Statements at most (each one D1 query), at least 1. */
  readonly maxStatements: number;
}

/** What one run of {@link purgeExpiredEvents} did. */
interface PurgeProgress {
  /** Events deleted (their deliveries and attempts with them). */
  readonly purged: number;
  /** D1 statements run, at most the limit. */
  readonly statements: number;
  /** The last statement came back full: more events may be past the cutoff (the next run continues). */
  readonly more: boolean;
}

/**
 * Finished recovery jobs deleted per run (one statement). Operators start a handful a day,
 * so one statement per 15-minute run keeps up; a backlog is worked off over later runs.
 */
const RECOVERY_JOB_PURGE_BATCH_SIZE = 500;

const DAY_MS = 86_400_000;

/** What one sweep did. */
interface SweepResult {
  /** Deliveries sent again to `DELIVERIES`. */
  readonly requeued: number;
  /** Confirmation checks of awaiting events sent to `DELIVERIES`. */
  readonly rechecks: number;
  /** Events deleted (with their deliveries and attempts). */
  readonly purged: number;
  /** Finished recovery jobs deleted. */
  readonly purgedRecoveryJobs: number;
  /** The `relay.backlog` event raised by this run; `null` when none was (or it was raised earlier in its window). */
  readonly backlogEventId: string | null;
}

/** Which shards a sweep visits and how much it does in each. */
export interface SweepPlan {
  /** The event shards visited, each once. */
  readonly shards: readonly EventShard[];
  /** Overdue deliveries claimed per shard, and overdue confirmation checks apart. */
  readonly claimLimit: number;
  /** Retention purge statements per shard, at least 1 (each one D1 query). */
  readonly purgeStatementsPerShard: number;
}

/**
 * Re-enqueues overdue deliveries, then purges old events, in every shard of `plan`. The rule:
 * a delivery is overdue when it is `pending` and its `next_attempt_at` (NULL: its
 * `created_at`) is more than {@link SWEEP_GRACE_MS} before `now`; at most `plan.claimLimit`
 * per shard and run, sent as `{ deliveryId, subscriptionId }` messages (ids only, with the
 * shard's name when it is not `DB`). The same rule on `next_check_at` for events
 * `awaiting_confirmation`: each overdue one is sent as a `{ kind: 'confirm', eventId, check }`
 * message (with its `shard` when not `DB`), due at once (its check is fenced by the count, so
 * a late original message and this copy check once). Events received more than
 * `RELAY_RETENTION_DAYS` days before `now` are deleted, deliveries and attempts
 * cascading, at most `plan.purgeStatementsPerShard` statements of 500 per shard
 * ({@link purgeExpiredEvents}); recovery jobs that finished (`done` or `failed`) before the
 * same cutoff are deleted from `DB`, at most {@link RECOVERY_JOB_PURGE_BATCH_SIZE} (a running
 * one is kept, however old). The shards are swept in parallel; a shard whose statement fails
 * is left out of the rest of the run (logged `relay_sweep_shard_failed`), the others are
 * swept, and the run throws that failure at its end.
 * First of all, when the oldest due `pending` delivery has been due for `backlogAlertSec` or
 * more, `relay.backlog` is raised, once per hour window (worker/relay/operational-alerts.ts);
 * a failure there is logged, not thrown, so the sweep still runs.
 *
 * @param env - `DB` (and the shards), `DELIVERIES`.
 * @param now - the sweep time, epoch ms (the cron's `scheduledTime`).
 * @param retentionDays - `RELAY_RETENTION_DAYS` from the settings, in days.
 * @param backlogAlertSec - `RELAY_BACKLOG_ALERT_SEC` from the settings, in seconds; 0: no alert.
 * @param plan - the shards and bounds of this run (worker/cron.ts gives the cron's share);
 *   by default every event shard of the settings, 500 claims of each kind and 10 purge
 *   statements per shard (`DB` alone with invalid settings).
 * @returns what was done, every shard together.
 * @throws whatever D1 or Queues throw, a shard's D1 failure once the other shards are swept
 *   (a claimed delivery not sent is simply retried by the next run after the grace period).
 *
 * @example
 * ```ts
 * const { requeued, rechecks, purged } = await sweepRelay(env, controller.scheduledTime, 30, 600);
 * ```
 */
export async function sweepRelay(
  env: Env,
  now: number,
  retentionDays: number,
  backlogAlertSec: number,
  plan: SweepPlan = defaultPlan(env),
): Promise<SweepResult> {
  // First: the re-enqueue below moves the due time of what it sends.
  const backlogEventId = await raiseBacklog(env, now, backlogAlertSec);
  const { shards, claimLimit } = plan;
  const run = new ShardSweep(shards);
  const overdueBefore = now - SWEEP_GRACE_MS;
  const ids = (
    await run.each('claim_deliveries', async (shard) =>
      inShard(await claimOverdueDeliveries(shard.db, overdueBefore, now, claimLimit), shard),
    )
  ).flat();
  await enqueueDeliveryTargets(env.DELIVERIES, ids);
  const checks = (
    await run.each('claim_checks', async (shard) =>
      (
        await claimOverdueChecks(shard.db, overdueBefore, now, claimLimit)
      ).map((claimed) => checkMessage(claimed, shard)),
    )
  ).flat();
  await sendInBatches<ConfirmationMessage>(env.DELIVERIES, checks);
  const cutoff = now - retentionDays * DAY_MS;
  const limits = { batchSize: EVENT_PURGE_BATCH_SIZE, maxStatements: plan.purgeStatementsPerShard };
  const progress = await run.each('purge', (shard) => purgeExpiredEvents(shard.db, cutoff, limits));
  const purged = progress.reduce((sum, shard) => sum + shard.purged, 0);
  const more = progress.some((shard) => shard.more);
  // Recovery jobs live in DB: not purged in a run where DB failed (as before shards).
  const purgedRecoveryJobs = run.failed(MAIN_SHARD)
    ? 0
    : await purgeRecoveryJobsBefore(env.DB, cutoff, RECOVERY_JOB_PURGE_BATCH_SIZE);
  run.throwIfFailed();
  logEvent('info', 'relay_swept', {
    shards: shards.length,
    requeued: ids.length,
    rechecks: checks.length,
    purged,
    purge_more: more,
    purged_recovery_jobs: purgedRecoveryJobs,
    backlog_event_id: backlogEventId,
  });
  return {
    requeued: ids.length,
    rechecks: checks.length,
    purged,
    purgedRecoveryJobs,
    backlogEventId,
  };
}

/** The plan of a sweep run outside the cron: every event shard, the bounds of one database. */
function defaultPlan(env: Env): SweepPlan {
  const loaded = loadSettings(env);
  return {
    shards: loaded.ok ? everyEventShard(env, loaded.settings) : [eventShardNamed(env, MAIN_SHARD)],
    claimLimit: SWEEP_BATCH_SIZE,
    purgeStatementsPerShard: PURGE_STATEMENTS_PER_SHARD,
  };
}

/** Claimed deliveries of `shard` as targets naming it (`DB` is left out, as before shards). */
function inShard(targets: readonly DeliveryTarget[], shard: EventShard): DeliveryTarget[] {
  return shard.name === MAIN_SHARD
    ? [...targets]
    : targets.map((target) => ({ ...target, shard: shard.name }));
}

/** The re-check message of a claimed check of `shard`. */
function checkMessage({ eventId, checks }: ClaimedCheck, shard: EventShard): ConfirmationMessage {
  return confirmationMessage({ eventId, check: checks, shard: shard.name });
}

/**
 * Deletes the events of one database received before `cutoff`, oldest first, in statements
 * of `limits.batchSize` events, stopping after `limits.maxStatements` statements or at the
 * first statement that comes back short (nothing older is left). Each statement is one D1
 * query and deletes the events' deliveries and attempts with them (ON DELETE CASCADE), so
 * one run costs at most `maxStatements` of the invocation's D1 queries, however large the
 * backlog; the next run resumes where this one stopped, since the oldest go first.
 *
 * @param db - the database to purge (one shard's, once events are spread over several).
 * @param cutoff - epoch ms; events received strictly earlier are deleted.
 * @param limits - events per statement and statements per run.
 * @returns how many events were deleted, in how many statements, and whether more may be left.
 * @throws {RangeError} when a limit is not a positive integer; whatever D1 throws (what earlier
 *   statements deleted stays deleted).
 *
 * @internal Exported for the tests, which run it with limits small enough to cross them.
 */
export async function purgeExpiredEvents(
  db: D1Database,
  cutoff: number,
  limits: PurgeLimits,
): Promise<PurgeProgress> {
  const { batchSize, maxStatements } = limits;
  if (
    !Number.isInteger(batchSize) ||
    batchSize < 1 ||
    !Number.isInteger(maxStatements) ||
    maxStatements < 1
  ) {
    throw new RangeError('purge limits must be positive integers');
  }
  let purged = 0;
  let statements = 0;
  let more = true;
  while (more && statements < maxStatements) {
    const count = await purgeWebhookEventsBefore(db, cutoff, batchSize);
    statements += 1;
    purged += count;
    more = count === batchSize;
  }
  return { purged, statements, more };
}

/** `relay.backlog` if due (see {@link sweepRelay}); its id when this run stored it, else `null`. */
async function raiseBacklog(env: Env, now: number, thresholdSec: number): Promise<string | null> {
  try {
    const event = await announceBacklog(env, now, thresholdSec);
    return event?.stored ? event.eventId : null;
  } catch (error) {
    logEvent('error', 'operational_event_failed', {
      event_type: 'relay.backlog',
      error_message: error instanceof Error ? error.message : String(error),
    });
    return null;
  }
}
