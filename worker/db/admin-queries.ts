/**
 * D1 queries of the admin API's events and deliveries routes (`/admin/events`,
 * `/admin/deliveries`): the keyset-paginated event listing, replay's upsert of
 * deliveries, the reset of one delivery for a retry, and the counts by delivery status.
 * Every time is epoch milliseconds; statements bind with `?N`.
 */
import {
  type DeliveryRecord,
  type DeliveryStatus,
  NEW_DELIVERY_ID,
  toDeliveryRecord,
} from './deliveries.ts';
import { type KeysetCursor, keysetPage } from './keyset.ts';
import type { WebhookEventStatus } from './webhook-events.ts';

/** An event as the listing shows it: no body (the detail route has it). */
export interface WebhookEventSummary {
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookEventStatus;
  readonly receivedAt: number;
  /** The body's `data.reference` when it is a string, else `null`. */
  readonly reference: string | null;
}

/** Filters and page of {@link listWebhookEvents}; `null` = no filter. */
interface EventListQuery {
  readonly eventType: string | null;
  readonly status: WebhookEventStatus | null;
  /** Exact match on the stored `data.reference`. */
  readonly reference: string | null;
  /** Inclusive lower bound on `received_at`, epoch ms. */
  readonly from: number | null;
  /** Exclusive upper bound on `received_at`, epoch ms. */
  readonly to: number | null;
  /** Strictly after this (received_at, event_id). */
  readonly after: KeysetCursor | null;
  /** Rows per page, 1..100. */
  readonly pageSize: number;
}

/** One page of events and the cursor of the next, `null` on the last page. */
interface EventPage {
  readonly events: WebhookEventSummary[];
  readonly next: KeysetCursor | null;
}

interface SummaryRow {
  event_id: string;
  event_type: string;
  status: string;
  received_at: number;
  reference: string | null;
}

/**
 * One page of events, newest first (ties by `event_id`, descending), keyset-paginated
 * on (received_at, event_id); each filter given is a plain comparison, so the index
 * starting with its column (migrations/0002, 0006) serves it.
 *
 * @param db - the D1 binding.
 * @param query - filters, cursor and page size.
 * @returns the page; `next` is set when at least one more row exists.
 * @throws whatever D1 throws.
 */
export async function listWebhookEvents(db: D1Database, query: EventListQuery): Promise<EventPage> {
  const page = await keysetPage<SummaryRow>(
    db,
    {
      select: 'SELECT event_id, event_type, status, received_at, reference FROM webhook_events',
      keys: ['received_at', 'event_id'],
      filters: [
        ['event_type = ?', query.eventType],
        ['status = ?', query.status],
        ['reference = ?', query.reference],
        ['received_at >= ?', query.from],
        ['received_at < ?', query.to],
      ],
      after: query.after,
      pageSize: query.pageSize,
    },
    (row) => ({ at: row.received_at, id: row.event_id }),
  );
  const events = page.rows.map((row) => ({
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as WebhookEventStatus,
    receivedAt: row.received_at,
    reference: row.reference,
  }));
  return { events, next: page.next };
}

/**
 * Replays an event: for every enabled subscription matching its type (or only
 * `subscriptionId`, whatever its filter), inserts a `pending` delivery due `now`, or,
 * where UNIQUE (event_id, subscription_id) already holds one, resets that row to
 * `pending` (attempts and their history are kept, so attempt numbers keep counting).
 *
 * @param db - the D1 binding.
 * @param event - the event's id and type.
 * @param subscriptionId - one subscription, or `null` for all that match.
 * @param now - epoch ms: the due time and update time.
 * @param before - statements run first in the same transaction (e.g. recording a forced
 *   replay on the event), so the record and the deliveries are written together or not at all.
 * @returns the ids of the deliveries now pending.
 */
export async function replayDeliveries(
  db: D1Database,
  event: { readonly eventId: string; readonly eventType: string },
  subscriptionId: string | null,
  now: number,
  before: readonly D1PreparedStatement[] = [],
): Promise<string[]> {
  const replay = db
    .prepare(
      `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
         last_status, created_at, updated_at)
       SELECT ${NEW_DELIVERY_ID}, ?1, s.id, 'pending', 0, ?3, NULL, ?3, ?3
       FROM subscriptions AS s
       WHERE s.enabled = 1
         AND ((?4 IS NULL AND (s.event_types IS NULL
               OR EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = ?2)))
           OR s.id = ?4)
       ON CONFLICT (event_id, subscription_id) DO UPDATE
         SET status = 'pending', next_attempt_at = excluded.next_attempt_at,
           updated_at = excluded.updated_at
       RETURNING id`,
    )
    .bind(event.eventId, event.eventType, now, subscriptionId);
  const results = await db.batch<{ id: string }>([...before, replay]);
  return (results.at(-1)?.results ?? []).map((row) => row.id);
}

/**
 * Resets one delivery to `pending`, due `now`, whatever its status (an admin retry).
 *
 * @param db - the D1 binding.
 * @param id - the delivery id.
 * @param now - epoch ms: the due time and update time.
 * @returns the reset record, or `undefined` when there is no such delivery.
 */
export async function resetDelivery(
  db: D1Database,
  id: string,
  now: number,
): Promise<DeliveryRecord | undefined> {
  const row = await db
    .prepare(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = ?2, updated_at = ?2
       WHERE id = ?1 RETURNING *`,
    )
    .bind(id, now)
    .first<Parameters<typeof toDeliveryRecord>[0]>();
  return row === null ? undefined : toDeliveryRecord(row);
}

/**
 * How many deliveries are in each status; a status without any counts 0.
 *
 * @param db - the D1 binding.
 */
export async function countDeliveriesByStatus(
  db: D1Database,
): Promise<Record<DeliveryStatus, number>> {
  const { results } = await db
    .prepare('SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status')
    .all<{ status: string; n: number }>();
  const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const row of results) {
    if (row.status in counts) counts[row.status as DeliveryStatus] = row.n;
  }
  return counts;
}
