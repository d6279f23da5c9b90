/**
 * D1 queries on the health of subscriptions (the health columns of `subscriptions` and
 * `subscription_attempt_hours`, migrations/0010): attempts counted per hour as they are
 * recorded, the run of failures, the relay's disable, the recent success rate, and the
 * deliveries re-enqueued when a subscription is enabled again. Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */

/** Milliseconds in an hour: the width of an attempt-count bucket. */
const HOUR_MS = 3_600_000;

/**
 * Hours of attempt counts behind the recent success rate: the current UTC hour and the 23
 * before it, so about the last day.
 */
export const SUCCESS_RATE_WINDOW_HOURS = 24;

/** One attempt, as the health sees it. */
export interface AttemptHealthInput {
  /** Whether the subscriber answered 2xx. */
  readonly succeeded: boolean;
  /** When the attempt settled, epoch ms. */
  readonly at: number;
  /** The health reason recorded when this attempt changes the state (healthy <-> failing). */
  readonly reason: string;
}

/** The subscription of a delivery, after {@link recordAttemptHealth}. */
export interface AttemptHealthState {
  readonly subscriptionId: string;
  /** Whether it is enabled. */
  readonly enabled: boolean;
  /** When its unbroken run of failed attempts began; `null` after a success. */
  readonly failingSince: number | null;
}

// The subscription of delivery ?1.
const SUBSCRIPTION_OF_DELIVERY = '(SELECT subscription_id FROM deliveries WHERE id = ?1)';

/**
 * Counts an attempt of a delivery in its subscription's hourly bucket (dropping buckets
 * older than the window) and moves its health: a success ends a run of failures (`failing`
 * -> `healthy`), a failure starts one (`healthy` -> `failing`, `failingSince` = `at`) or
 * extends it. A disabled subscription's state is left alone (an attempt already in flight
 * when it was disabled must not re-enable it), but the attempt is still counted. One
 * transaction, with the statements `recordedWith` ahead of it.
 *
 * @param deliveryId - the delivery the attempt belongs to.
 * @param attempt - its outcome, time and the reason of a state change.
 * @param recordedWith - statements to run first in the same batch (the attempt's own
 *   record), so an attempt and its health cost one round trip and land together.
 * @returns the subscription's state after it, or `undefined` when the delivery or its
 *   subscription is gone.
 */
export async function recordAttemptHealth(
  db: D1Database,
  deliveryId: string,
  attempt: AttemptHealthInput,
  recordedWith: readonly D1PreparedStatement[] = [],
): Promise<AttemptHealthState | undefined> {
  return recordHealth(db, SUBSCRIPTION_OF_DELIVERY, deliveryId, attempt, recordedWith);
}

/**
 * {@link recordAttemptHealth} for an attempt whose delivery is stored in another database
 * than `DB` (an event shard, worker/db/event-shards.ts): the subscription is named, since
 * `DB` holds no row of the delivery. Its own record is written to the shard before this.
 *
 * @param subscriptionId - the delivery's subscription.
 * @param attempt - its outcome, time and the reason of a state change.
 * @returns the subscription's state after it, or `undefined` when the subscription is gone.
 */
export async function recordSubscriptionAttemptHealth(
  db: D1Database,
  subscriptionId: string,
  attempt: AttemptHealthInput,
): Promise<AttemptHealthState | undefined> {
  return recordHealth(db, '?1', subscriptionId, attempt, []);
}

// The statements both share: `subscription` is the SQL naming the subscription from ?1.
async function recordHealth(
  db: D1Database,
  subscription: string,
  subject: string,
  attempt: AttemptHealthInput,
  recordedWith: readonly D1PreparedStatement[],
): Promise<AttemptHealthState | undefined> {
  const hour = Math.floor(attempt.at / HOUR_MS);
  const [succeeded, failed] = attempt.succeeded ? [1, 0] : [0, 1];
  // On a success: a failing subscriber is healthy again. On a failure: a healthy one is
  // failing since now; a run already going keeps its start.
  const move = attempt.succeeded
    ? `health_changed_at = CASE WHEN failing_since IS NULL THEN health_changed_at ELSE ?2 END,
       health_reason = CASE WHEN failing_since IS NULL THEN health_reason ELSE ?3 END,
       failing_since = NULL`
    : `health_changed_at = CASE WHEN failing_since IS NULL THEN ?2 ELSE health_changed_at END,
       health_reason = CASE WHEN failing_since IS NULL THEN ?3 ELSE health_reason END,
       failing_since = COALESCE(failing_since, ?2)`;
  const results = await db.batch<{ id: string; enabled: number; failing_since: number | null }>([
    ...recordedWith,
    db
      .prepare(
        `INSERT INTO subscription_attempt_hours (subscription_id, hour, succeeded, failed)
         SELECT s.id, ?2, ?3, ?4 FROM subscriptions AS s WHERE s.id = ${subscription}
         ON CONFLICT (subscription_id, hour) DO UPDATE
           SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed`,
      )
      .bind(subject, hour, succeeded, failed),
    db
      .prepare(
        `DELETE FROM subscription_attempt_hours
         WHERE subscription_id = ${subscription} AND hour <= ?2`,
      )
      .bind(subject, hour - SUCCESS_RATE_WINDOW_HOURS),
    db
      .prepare(`UPDATE subscriptions SET ${move} WHERE id = ${subscription} AND enabled = 1`)
      .bind(subject, attempt.at, attempt.reason),
    db
      .prepare(`SELECT id, enabled, failing_since FROM subscriptions WHERE id = ${subscription}`)
      .bind(subject),
  ]);
  const row = results.at(-1)?.results[0];
  if (row === undefined) return undefined;
  return { subscriptionId: row.id, enabled: row.enabled === 1, failingSince: row.failing_since };
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

/** Attempts of one subscription over the success-rate window. */
export interface AttemptCounts {
  readonly succeeded: number;
  readonly failed: number;
}

/**
 * Attempts per subscription over the last {@link SUCCESS_RATE_WINDOW_HOURS} UTC hours
 * (the one holding `now` included): at most 24 rows per subscription, read through the
 * bucket table's primary key.
 *
 * @param ids - the subscriptions; none: an empty map without a query.
 * @param now - the current time, epoch ms.
 * @returns counts by subscription id; a subscription without attempts is absent.
 */
export async function countRecentAttempts(
  db: D1Database,
  ids: readonly string[],
  now: number,
): Promise<Map<string, AttemptCounts>> {
  const counts = new Map<string, AttemptCounts>();
  if (ids.length === 0) return counts;
  const firstHour = Math.floor(now / HOUR_MS) - (SUCCESS_RATE_WINDOW_HOURS - 1);
  const { results } = await db
    .prepare(
      `SELECT subscription_id, SUM(succeeded) AS succeeded, SUM(failed) AS failed
       FROM subscription_attempt_hours
       WHERE subscription_id IN (SELECT value FROM json_each(?1)) AND hour >= ?2
       GROUP BY subscription_id`,
    )
    .bind(JSON.stringify(ids), firstHour)
    .all<{ subscription_id: string; succeeded: number; failed: number }>();
  for (const row of results) {
    counts.set(row.subscription_id, { succeeded: row.succeeded, failed: row.failed });
  }
  return counts;
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
