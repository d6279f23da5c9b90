/**
 * D1 queries on the health of subscriptions (the health columns of `subscriptions`,
 * migrations/0010): the run of failures, the relay's disable, and the deliveries re-enqueued
 * when a subscription is enabled again. The attempt counts behind the success rate are kept
 * by each subscription's outbox (worker/relay/outbox-health.ts). Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */

/** One attempt, as the health sees it. */
export interface AttemptHealthInput {
  /** Whether the subscriber answered 2xx. */
  readonly succeeded: boolean;
  /** When the attempt settled, epoch ms. */
  readonly at: number;
  /** The health reason recorded when this attempt changes the state (healthy <-> failing). */
  readonly reason: string;
}

/** A subscription's state after {@link moveHealth}. */
export interface AttemptHealthState {
  /** Whether it is enabled. */
  readonly enabled: boolean;
  /** When its unbroken run of failed attempts began; `null` after a success. */
  readonly failingSince: number | null;
}

/**
 * Moves an enabled subscription's health on an attempt that changes it: a success ends a
 * run of failures (`failing` -> `healthy`), a failure starts one (`healthy` -> `failing`,
 * `failingSince` = `at`); a run already going keeps its start. A disabled subscription is
 * left alone (an attempt in flight when it was disabled must not re-enable it). The relay
 * calls this only when its copy of the subscription says the state changes, so an attempt
 * that changes nothing costs `DB` no query.
 *
 * @param id - the subscription.
 * @param attempt - its outcome, time and the reason of a state change.
 * @returns the state after it; `undefined` when it is disabled or gone.
 */
export async function moveHealth(
  db: D1Database,
  id: string,
  attempt: AttemptHealthInput,
): Promise<AttemptHealthState | undefined> {
  const move = attempt.succeeded
    ? `health_changed_at = CASE WHEN failing_since IS NULL THEN health_changed_at ELSE ?2 END,
       health_reason = CASE WHEN failing_since IS NULL THEN health_reason ELSE ?3 END,
       failing_since = NULL`
    : `health_changed_at = CASE WHEN failing_since IS NULL THEN ?2 ELSE health_changed_at END,
       health_reason = CASE WHEN failing_since IS NULL THEN ?3 ELSE health_reason END,
       failing_since = COALESCE(failing_since, ?2)`;
  const row = await db
    .prepare(
      `UPDATE subscriptions SET ${move} WHERE id = ?1 AND enabled = 1
       RETURNING enabled, failing_since`,
    )
    .bind(id, attempt.at, attempt.reason)
    .first<{ enabled: number; failing_since: number | null }>();
  return row === null ? undefined : { enabled: row.enabled === 1, failingSince: row.failing_since };
}

/** What {@link disableForHealth} records. */
interface HealthDisable {
  /** When, epoch ms. */
  readonly at: number;
  /** Why, in words. */
  readonly reason: string;
  /**
   * Disable only while the run of failures still began then (a success in between ended
   * it); `undefined` = whatever the run.
   */
  readonly failingSince?: number;
}

/**
 * Disables an enabled subscription on the relay's own decision (a 410, or failures for
 * the whole span), recording when and why.
 *
 * @param id - the subscription id.
 * @param disable - the time, the reason and the run it ends.
 * @returns its URL when this call disabled it; `undefined` when it was already disabled,
 *   is gone, or its run of failures changed meanwhile.
 */
export async function disableForHealth(
  db: D1Database,
  id: string,
  disable: HealthDisable,
): Promise<{ readonly url: string } | undefined> {
  const row = await db
    .prepare(
      `UPDATE subscriptions
       SET enabled = 0, disabled_at = ?2, health_changed_at = ?2, health_reason = ?3,
         updated_at = ?2
       WHERE id = ?1 AND enabled = 1 AND (?4 IS NULL OR failing_since = ?4)
       RETURNING url`,
    )
    .bind(id, disable.at, disable.reason, disable.failingSince ?? null)
    .first<{ url: string }>();
  return row === null ? undefined : { url: row.url };
}

/**
 * Re-queues what waits for a subscription enabled again: its `pending` deliveries and
 * those that became `failed` at or after `since` (skipped while it was disabled,
 * dead-lettered or failed by a 410 during the run of failures), all set `pending`, due
 * `now`. Their attempt history is kept.
 *
 * @param subscriptionId - the subscription.
 * @param since - epoch ms: failed deliveries last updated before it stay failed.
 * @param now - epoch ms: the due time and update time.
 * @returns the ids now pending, oldest first.
 */
export async function requeueSubscriptionDeliveries(
  db: D1Database,
  subscriptionId: string,
  since: number,
  now: number,
): Promise<string[]> {
  const { results } = await db
    .prepare(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = ?3, updated_at = ?3
       WHERE subscription_id = ?1
         AND (status = 'pending' OR (status = 'failed' AND updated_at >= ?2))
       RETURNING id, created_at`,
    )
    .bind(subscriptionId, since, now)
    .all<{ id: string; created_at: number }>();
  return results
    .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1))
    .map((row) => row.id);
}
