/**
 * D1 queries of the deferred confirmation of money events (migrations/0007): the fenced
 * write of a re-check's outcome and the sweeper's claim of overdue checks. Every time is
 * epoch milliseconds; statements bind with `?N`; `db` is the D1 database of the event's
 * shard (worker/db/event-shards.ts; `DB` with one shard), and the sweeper's claim runs once per
 * shard.
 */
import type { WebhookEventStatus } from './webhook-events.ts';

/** What one re-check writes on its event. */
export interface CheckOutcome {
  /** `awaiting_confirmation` again, `confirmed`, `unconfirmed`, or `received` (confirmation turned off). */
  readonly status: WebhookEventStatus;
  /** The finding in words. */
  readonly reason: string;
  /** When the check was made. */
  readonly checkedAt: number;
  /** When the next check is due; `null` unless still awaiting. */
  readonly nextCheckAt: number | null;
}

/**
 * The fenced write of a re-check's outcome, for a `DB.batch()`: it applies only while the
 * event is still `awaiting_confirmation` after exactly `checksBefore` checks, and counts
 * this one. Two re-checks of the same step (a queue message delivered twice, or the sweeper
 * re-sending one that was only late) both read `checksBefore`; the first batch to run moves
 * the count on, so the second writes nothing (no row RETURNED; `meta.changes` would also
 * count what the outcome trigger of migrations/0012 writes). Put the fan-out guarded on
 * the same condition before it in the batch (`fanOutConfirmedDeliveriesStatement`).
 *
 * @param eventId - the event checked.
 * @param checksBefore - `confirmation_checks` as read before the lookup.
 * @param outcome - status, reason, check time and next check time.
 */
export function settleCheckStatement(
  db: D1Database,
  eventId: string,
  checksBefore: number,
  outcome: CheckOutcome,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_events
       SET status = ?3, confirmation_reason = ?4, confirmation_checks = confirmation_checks + 1,
         confirmation_checked_at = ?5, next_check_at = ?6
       WHERE event_id = ?1 AND status = 'awaiting_confirmation' AND confirmation_checks = ?2
       RETURNING event_id`,
    )
    .bind(
      eventId,
      checksBefore,
      outcome.status,
      outcome.reason,
      outcome.checkedAt,
      outcome.nextCheckAt,
    );
}

/** An awaiting event the sweeper claimed: its id and the checks made so far. */
export interface ClaimedCheck {
  readonly eventId: string;
  readonly checks: number;
}

/**
 * Claims up to `limit` awaiting events whose next check is overdue (due at or before
 * `overdueBefore`), oldest due first, moving their `next_check_at` to `now`: a claimed
 * event is claimed again only after another grace period, so a slow queue is not flooded
 * with copies (a copy is harmless anyway: the re-check is fenced by its check count).
 *
 * @param overdueBefore - due times at or before this are overdue, epoch ms.
 * @param now - the sweep time, epoch ms.
 * @param limit - the most events claimed.
 * @returns the claimed events.
 */
export async function claimOverdueChecks(
  db: D1Database,
  overdueBefore: number,
  now: number,
  limit: number,
): Promise<ClaimedCheck[]> {
  const { results } = await db
    .prepare(
      `UPDATE webhook_events SET next_check_at = ?2
       WHERE event_id IN (
         SELECT event_id FROM webhook_events
         WHERE status = 'awaiting_confirmation' AND next_check_at <= ?1
         ORDER BY next_check_at, event_id
         LIMIT ?3)
       RETURNING event_id, confirmation_checks`,
    )
    .bind(overdueBefore, now, limit)
    .all<{ event_id: string; confirmation_checks: number }>();
  return results.map((row) => ({ eventId: row.event_id, checks: row.confirmation_checks }));
}
