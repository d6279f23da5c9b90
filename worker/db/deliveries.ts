/**
 * D1 queries on `deliveries` (migrations/0004): the fan-out at ingress, the consumer's
 * reads and its dead-letter mark, the sweeper's claim (attempts are in delivery-attempts.ts). Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */
import { MAIN_SHARD } from './event-shards.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
} from './subscription-snapshot.ts';
import type { NewWebhookEvent } from './webhook-events.ts';

/** Where a delivery stands: `pending` until a 2xx (`delivered`) or a 410 / dead letter (`failed`). */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Every {@link DeliveryStatus}, in the order a delivery reaches them. */
export const DELIVERY_STATUSES = Object.freeze(['pending', 'delivered', 'failed'] as const);

/** A stored delivery, as the domain sees it. */
export interface DeliveryRecord {
  /** `dlv_<uuid>`. */
  readonly id: string;
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly status: DeliveryStatus;
  /** Attempts recorded so far. */
  readonly attempts: number;
  /** When the next attempt is due; `null` once settled. */
  readonly nextAttemptAt: number | null;
  /** HTTP status of the last attempt; `null` before any or when none came back. */
  readonly lastStatus: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  subscription_id: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  created_at: number;
  updated_at: number;
}

const STATUSES: ReadonlySet<string> = new Set(DELIVERY_STATUSES);

/**
 * A delivery and its subscription, as a statement that writes or claims deliveries returns
 * them (`RETURNING id, subscription_id`): its queue message names the subscription's outbox,
 * so the consumer hands it over without reading D1.
 */
export interface DeliveryTarget {
  /** `dlv_<uuid>`. */
  readonly deliveryId: string;
  readonly subscriptionId: string;
  /** The event shard's binding name (worker/db/event-shards.ts); absent: `DB`. */
  readonly shard?: string;
}

/** A row `RETURNING id, subscription_id`. */
export interface DeliveryTargetRow {
  id: string;
  subscription_id: string;
}

/**
 * Maps the rows of a statement `RETURNING id, subscription_id` to targets.
 *
 * @param rows - its `results`; `undefined` (a statement that did not run): none.
 * @param shard - the binding name of the shard the statement ran on; `DB` (or absent) is
 *   left out of the targets, as messages before shards had it.
 */
export function toDeliveryTargets(
  rows: readonly DeliveryTargetRow[] | undefined,
  shard?: string,
): DeliveryTarget[] {
  const where = shard === undefined || shard === MAIN_SHARD ? {} : { shard };
  return (rows ?? []).map((row) => ({
    deliveryId: row.id,
    subscriptionId: row.subscription_id,
    ...where,
  }));
}

/** SQL expression of a new delivery id (`dlv_` + a version 4 UUID), made inside the INSERT. */
export const NEW_DELIVERY_ID = `'dlv_' || lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2)))
  || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1)
  || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))`;

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `deliveries`.
 * @throws {Error} when the row holds a status this code does not know.
 */
export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  if (!STATUSES.has(row.status)) throw new Error(`unknown delivery status ${row.status}`);
  return {
    id: row.id,
    eventId: row.event_id,
    subscriptionId: row.subscription_id,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The fan-out of a new event, to run in the same `DB.batch()` right after
 * `insertWebhookEventStatement`: one `pending` delivery per enabled subscription whose
 * `event_types` is NULL or contains the event's type, due now. A duplicate writes
 * nothing: the guard requires the stored row to carry this request's `received_at`
 * (a duplicate's insert did nothing, so the row keeps the first one's), and
 * UNIQUE (event_id, subscription_id) settles two copies stored in the same millisecond.
 * Its `results` are the {@link DeliveryTargetRow}s of the deliveries written.
 *
 * @param event - the event being stored (its id, type and receive time are used).
 * @param view - how `db` reads the subscriptions (worker/db/subscription-snapshot.ts); by
 *   default the table (`db` is `DB`).
 */
export function fanOutDeliveriesStatement(
  db: D1Database,
  event: NewWebhookEvent,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): D1PreparedStatement {
  return fanOutStatement(
    db,
    view,
    3,
    '(SELECT e.received_at FROM webhook_events AS e WHERE e.event_id = ?1) = ?3',
  ).bind(event.eventId, event.eventType, event.receivedAt, ...snapshotBinds(view));
}

/**
 * The fan-out of an event the moment a re-check confirms it, to run in the same
 * `DB.batch()` right before `settleCheckStatement` (worker/db/event-confirmation.ts) and
 * guarded by the same condition: the event is still `awaiting_confirmation` after exactly
 * `checksBefore` checks. D1 runs one batch at a time, so of two concurrent re-checks of
 * the same step only the first finds the condition true and writes deliveries; UNIQUE
 * (event_id, subscription_id) would stop a second copy anyway. One `pending` delivery per
 * enabled subscription matching the type, created and due `now`. Its `results` are the
 * {@link DeliveryTargetRow}s of the deliveries written.
 *
 * @param event - the event's id and type.
 * @param checksBefore - `confirmation_checks` as read before the lookup.
 * @param now - epoch ms: creation and due time.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export function fanOutConfirmedDeliveriesStatement(
  db: D1Database,
  event: { readonly eventId: string; readonly eventType: string },
  checksBefore: number,
  now: number,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): D1PreparedStatement {
  return fanOutStatement(
    db,
    view,
    4,
    `EXISTS (SELECT 1 FROM webhook_events AS e WHERE e.event_id = ?1
       AND e.status = 'awaiting_confirmation' AND e.confirmation_checks = ?4)`,
  ).bind(event.eventId, event.eventType, now, checksBefore, ...snapshotBinds(view));
}

/**
 * The fan-out of one of the relay's own (operational) events, to run in the same
 * `DB.batch()` right after `insertWebhookEventStatement`, guarded like
 * {@link fanOutDeliveriesStatement} (a repeat of the event id writes nothing). Only
 * subscriptions that list the type explicitly get it (NULL = every type of the payment
 * service, not the relay's alerts), and never the subscription the event is about.
 *
 * @param event - the event being stored (its id, type and receive time are used).
 * @param subjectSubscriptionId - the subscription the event is about, left out; `null`: none.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export function fanOutOperationalDeliveriesStatement(
  db: D1Database,
  event: NewWebhookEvent,
  subjectSubscriptionId: string | null,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): D1PreparedStatement {
  return fanOutStatement(
    db,
    view,
    4,
    '(SELECT e.received_at FROM webhook_events AS e WHERE e.event_id = ?1) = ?3',
    `EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = ?2)
       AND s.id IS NOT ?4`,
  ).bind(
    event.eventId,
    event.eventType,
    event.receivedAt,
    subjectSubscriptionId,
    ...snapshotBinds(view),
  );
}

/**
 * The one delivery of an event meant for a single subscription (an operator's test event),
 * whatever that subscription's `event_types`, written only while it is enabled; in the same
 * `DB.batch()` right after `insertWebhookEventStatement`, guarded like the fan-outs above.
 *
 * @param event - the event being stored (its id, type and receive time are used).
 * @param subscriptionId - the one subscription it goes to.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export function fanOutToSubscriptionStatement(
  db: D1Database,
  event: NewWebhookEvent,
  subscriptionId: string,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): D1PreparedStatement {
  return fanOutStatement(
    db,
    view,
    4,
    '(SELECT e.received_at FROM webhook_events AS e WHERE e.event_id = ?1) = ?3',
    's.id = ?4',
  ).bind(event.eventId, event.eventType, event.receivedAt, subscriptionId, ...snapshotBinds(view));
}

/** Which subscriptions get an event of type ?2: those with no filter or one listing it. */
const MATCHES_TYPE = `(s.event_types IS NULL
         OR EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = ?2))`;

/**
 * The fan-out the statements above share: one `pending` delivery per enabled subscription
 * that `matches` (by default: whose `event_types` is NULL or contains the type ?2) for event
 * ?1, created and due at ?3, written only while `guard` holds; `RETURNING id, subscription_id`.
 * The subscriptions come from `view`: a snapshot is bound right after the statement's own
 * `params` parameters.
 */
function fanOutStatement(
  db: D1Database,
  view: SubscriptionsView,
  params: 3 | 4,
  guard: string,
  matches: string = MATCHES_TYPE,
): D1PreparedStatement {
  return db.prepare(
    `${subscriptionsCte(view, params + 1)}INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
       last_status, created_at, updated_at)
     SELECT ${NEW_DELIVERY_ID}, ?1, s.id, 'pending', 0, ?3, NULL, ?3, ?3
     FROM subscriptions AS s
     WHERE s.enabled = 1
       AND ${matches}
       AND ${guard}
     ON CONFLICT DO NOTHING
     RETURNING id, subscription_id`,
  );
}

/**
 * Reads one delivery.
 *
 * @param id - the delivery id.
 * @returns the record, or `undefined` when there is none.
 */
export async function findDelivery(
  db: D1Database,
  id: string,
): Promise<DeliveryRecord | undefined> {
  const row = await db
    .prepare('SELECT * FROM deliveries WHERE id = ?1')
    .bind(id)
    .first<DeliveryRow>();
  return row === null ? undefined : toDeliveryRecord(row);
}

/**
 * Every delivery of an event, oldest first (ties by id).
 *
 * @param eventId - the provider's `event_id`.
 */
export async function listEventDeliveries(
  db: D1Database,
  eventId: string,
): Promise<DeliveryRecord[]> {
  const { results } = await db
    .prepare('SELECT * FROM deliveries WHERE event_id = ?1 ORDER BY created_at, id')
    .bind(eventId)
    .all<DeliveryRow>();
  return results.map(toDeliveryRecord);
}

/**
 * Marks a pending delivery `failed` (dead-lettered, or its subscription is gone).
 *
 * @param deliveryId - the delivery id.
 * @param now - the update time, epoch milliseconds.
 * @returns `true` when a pending delivery was marked, `false` when it was missing or settled.
 */
export async function markDeliveryFailed(
  db: D1Database,
  deliveryId: string,
  now: number,
): Promise<boolean> {
  // RETURNING, not `meta.changes`: D1 counts the rows triggers write too (migrations/0012
  // keeps the event's outcome up to date from here).
  const { results } = await db
    .prepare(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = ?2
       WHERE id = ?1 AND status = 'pending'
       RETURNING id`,
    )
    .bind(deliveryId, now)
    .all<{ id: string }>();
  return results.length === 1;
}

/**
 * Claims up to `limit` deliveries the sweeper must re-enqueue (worker/relay/sweeper.ts):
 * `pending` with `next_attempt_at` (or, when NULL, `created_at`) at or before
 * `overdueBefore`. The claim moves their `next_attempt_at` to `now`, so a delivery is
 * re-enqueued at most once per grace period even if the queue is slow to run it (the
 * consumer resets it on its next attempt). Oldest due first.
 *
 * @param overdueBefore - due times at or before this are overdue, epoch ms.
 * @param now - the sweep time, epoch ms.
 * @param limit - the most rows claimed.
 * @returns the deliveries claimed, with their subscriptions.
 */
export async function claimOverdueDeliveries(
  db: D1Database,
  overdueBefore: number,
  now: number,
  limit: number,
): Promise<DeliveryTarget[]> {
  const { results } = await db
    .prepare(
      `UPDATE deliveries SET next_attempt_at = ?2, updated_at = ?2
       WHERE id IN (
         SELECT id FROM deliveries
         WHERE status = 'pending' AND COALESCE(next_attempt_at, created_at) <= ?1
         ORDER BY COALESCE(next_attempt_at, created_at), id
         LIMIT ?3)
       RETURNING id, subscription_id`,
    )
    .bind(overdueBefore, now, limit)
    .all<DeliveryTargetRow>();
  return toDeliveryTargets(results);
}
