/**
 * The events a subscription missed while it was disabled (migrations/0015): while disabled,
 * a fan-out writes no delivery for it, so enabling it again with `requeue_pending` starts a
 * recovery job of kind `missed_events` that walks the events fanned out during the disable
 * in keyset pages on (received_at, event_id) and writes the deliveries they would have had.
 * Each statement runs on one event shard; on a shard other than `DB` it reads the
 * subscriptions through a snapshot (`view`, worker/db/subscription-snapshot.ts). Every time
 * is epoch milliseconds; statements bind with `?N`; `db` is the D1 binding of the shard (by
 * default `DB`).
 */
import { CONFIRMATION_DELAYS_SEC } from '../relay/confirmation-schedule.ts';
import { OPERATIONAL_TYPES } from './admin-deliveries.ts';
import {
  type DeliveryTarget,
  type DeliveryTargetRow,
  NEW_DELIVERY_ID,
  toDeliveryTargets,
} from './deliveries.ts';
import type { RecoveryJob } from './recovery-jobs.ts';
import type { RecoveryCandidate, RecoveryStep } from './recovery-pages.ts';
import { advanceRecoveryJobStatement, JOB_GUARD, outcomeOf } from './recovery-shard-pages.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
} from './subscription-snapshot.ts';
import { bodySubscriptionIdSql } from './webhook-events.ts';

/**
 * How far before the disable an event may have fanned out without its delivery, in ms: an
 * ingress that read the subscriptions before the disable wrote its deliveries, but one that
 * took its time (the upstream check of a money event) may write them just after it.
 */
const DISABLE_RACE_MS = 60_000;

/**
 * How long before its fan-out an event may have been received, in ms: a money event fans out
 * when a re-check confirms it, at most the whole check schedule (plus an hour of slack for a
 * late check) after it arrived. Only the events received since the disable minus this are
 * read, so the walk uses the index on (received_at, event_id).
 */
const FAN_OUT_LAG_MS =
  CONFIRMATION_DELAYS_SEC.reduce((sum, delay) => sum + delay, 0) * 1000 + 3_600_000;

/** What {@link countMissedEvents} counted. */
export interface MissedEventCount {
  /** Events missed, at most the cap. */
  readonly count: number;
  /** More than the cap were missed: `count` is the cap. */
  readonly capped: boolean;
}

/**
 * The events subscription `?1` missed between `?2` (its disable) and `?3` (the re-enable):
 * delivered ones (`received`, or `confirmed`) whose fan-out, the confirmation of a re-checked
 * money event or else the receipt, fell in that span, matching its type as the fan-out
 * matches it (the relay's own events, `?4`, only when listed, never the one about it), and
 * without a delivery to it.
 */
const MISSED_EVENTS = `FROM webhook_events AS e JOIN subscriptions AS s ON s.id = ?1
  WHERE e.received_at >= ?2 - ${DISABLE_RACE_MS + FAN_OUT_LAG_MS} AND e.received_at < ?3
    AND e.status IN ('received', 'confirmed')
    AND COALESCE(e.confirmation_checked_at, e.received_at) >= MAX(?2 - ${DISABLE_RACE_MS}, s.created_at)
    AND ((s.event_types IS NULL AND e.event_type NOT IN (SELECT value FROM json_each(?4)))
      OR EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = e.event_type))
    AND NOT (e.event_type IN (SELECT value FROM json_each(?4))
      AND ${bodySubscriptionIdSql('e')} IS s.id)
    AND NOT EXISTS (SELECT 1 FROM deliveries AS d
      WHERE d.event_id = e.event_id AND d.subscription_id = s.id)`;

/**
 * How many events a subscription missed while it was disabled, up to `cap` (one query
 * reading at most `cap + 1` matches).
 *
 * @param subscriptionId - the subscription.
 * @param since - when it was disabled.
 * @param until - when it was enabled again (exclusive).
 * @param cap - the most counted.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export async function countMissedEvents(
  db: D1Database,
  subscriptionId: string,
  since: number,
  until: number,
  cap: number,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<MissedEventCount> {
  const row = await db
    .prepare(
      `${subscriptionsCte(view, 6)}SELECT COUNT(*) AS n FROM (SELECT 1 ${MISSED_EVENTS} LIMIT ?5)`,
    )
    .bind(subscriptionId, since, until, OPERATIONAL_TYPES, cap + 1, ...snapshotBinds(view))
    .first<{ n: number }>();
  const n = row?.n ?? 0;
  return { count: Math.min(n, cap), capped: n > cap };
}

/**
 * The counts of several shards as one: summed, capped at `cap` (`capped` when a shard was
 * capped or the sum passes it). One shard's count is answered as it is.
 *
 * @param counts - one per shard, each counted with the same cap.
 * @param cap - the most counted.
 */
export function sumMissedEventCounts(
  counts: readonly MissedEventCount[],
  cap: number,
): MissedEventCount {
  const [only] = counts;
  if (counts.length === 1 && only !== undefined) return only;
  const total = counts.reduce((sum, count) => sum + count.count, 0);
  return {
    count: Math.min(total, cap),
    capped: total > cap || counts.some((count) => count.capped),
  };
}

/**
 * The next page of events a `missed_events` job's subscription missed, oldest first, after
 * its cursor: each candidate's `id` is the event id, `createdAt` its receive time, `enabled`
 * whether the subscription is enabled now.
 *
 * @param job - the job (its subscription, span and cursor).
 * @param pageSize - rows to read, at least 1.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export async function readMissedEventsPage(
  db: D1Database,
  job: RecoveryJob,
  pageSize: number,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<RecoveryCandidate[]> {
  const { filter, cursor } = job;
  const after = cursor === null ? '' : 'AND (e.received_at, e.event_id) > (?6, ?7)';
  const { results } = await db
    .prepare(
      `${subscriptionsCte(view, cursor === null ? 6 : 8)}SELECT e.event_id, e.received_at, s.id AS subscription_id, s.enabled ${MISSED_EVENTS} ${after}
       ORDER BY e.received_at, e.event_id LIMIT ?5`,
    )
    .bind(
      filter.subscriptionId,
      filter.since,
      filter.until ?? job.startedAt,
      OPERATIONAL_TYPES,
      pageSize,
      ...(cursor === null ? [] : [cursor.at, cursor.id]),
      ...snapshotBinds(view),
    )
    .all<{ event_id: string; received_at: number; subscription_id: string; enabled: number }>();
  return results.map((row) => ({
    id: row.event_id,
    createdAt: row.received_at,
    subscriptionId: row.subscription_id,
    enabled: row.enabled === 1,
  }));
}

/**
 * Takes one page for a `missed_events` job on `DB`, in one transaction: writes the page's
 * deliveries ({@link insertMissedDeliveriesStatement}) and moves the job on as
 * `advanceRecoveryJobStatement` does; both only while the job is `running` with
 * `pages = step.page`, so a redelivered message writes nothing.
 *
 * @param job - the job.
 * @param step - the page number, the events read, whether it is its shard's last and the
 *   shard that follows.
 * @param now - the creation and update time.
 * @returns the deliveries written (to enqueue), with their subscription, or `null` when the
 *   page was already taken.
 * @throws whatever D1 throws (nothing is written then).
 */
export async function takeMissedEventsPage(
  db: D1Database,
  job: RecoveryJob,
  step: RecoveryStep,
  now: number,
): Promise<DeliveryTarget[] | null> {
  const wanted = step.candidates.filter((candidate) => candidate.enabled).map((c) => c.id);
  const [written, moved] = await db.batch<DeliveryTargetRow>([
    insertMissedDeliveriesStatement(db, job, { page: step.page, wanted, now }, JOB_GUARD),
    // changes(): the deliveries the insert above wrote, in the same transaction.
    advanceRecoveryJobStatement(
      db,
      job.id,
      outcomeOf(step, step.candidates.length - wanted.length),
      now,
    ),
  ]);
  if ((moved?.results.length ?? 0) === 0) return null;
  return toDeliveryTargets(written?.results);
}

/**
 * The write of a page of missed events: a `pending` delivery, due `now`, of each `wanted`
 * event to the job's subscription while it is enabled (UNIQUE (event_id, subscription_id)
 * keeps one that appeared meanwhile), only while `guard` holds (it reads the job id as `?4`
 * and the page as `?5`). Its `results` are the {@link DeliveryTargetRow}s written.
 *
 * @param job - the job (its id and subscription).
 * @param page - the page number, the event ids and the time.
 * @param guard - the SQL condition under which the page is still to take.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export function insertMissedDeliveriesStatement(
  db: D1Database,
  job: RecoveryJob,
  page: { readonly page: number; readonly wanted: readonly string[]; readonly now: number },
  guard: string,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): D1PreparedStatement {
  return db
    .prepare(
      `${subscriptionsCte(view, 6)}INSERT INTO deliveries (id, event_id, subscription_id, status, attempts,
           next_attempt_at, last_status, created_at, updated_at)
         SELECT ${NEW_DELIVERY_ID}, e.event_id, s.id, 'pending', 0, ?2, NULL, ?2, ?2
         FROM webhook_events AS e JOIN subscriptions AS s ON s.id = ?3
         WHERE e.event_id IN (SELECT value FROM json_each(?1)) AND s.enabled = 1
           AND ${guard}
         ON CONFLICT DO NOTHING
         RETURNING id, subscription_id`,
    )
    .bind(
      JSON.stringify(page.wanted),
      page.now,
      job.filter.subscriptionId,
      job.id,
      page.page,
      ...snapshotBinds(view),
    );
}
