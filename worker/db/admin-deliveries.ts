/**
 * D1 queries of the admin API's delivery listing and hourly chart (`GET
 * /admin/deliveries`, `GET /admin/deliveries/hourly`): deliveries newest first with their
 * event's type, keyset-paginated, and deliveries counted per hour of creation by status.
 * Every time is epoch milliseconds; statements bind with `?N`.
 */
import {
  DELIVERY_STATUSES,
  type DeliveryRecord,
  type DeliveryStatus,
  toDeliveryRecord,
} from './deliveries.ts';
import { type KeysetCursor, keysetPage } from './keyset.ts';

/** Milliseconds in an hour: the width of a bucket of {@link countDeliveriesByHour}. */
export const HOUR_MS = 3_600_000;

/** A delivery as the listing shows it: the stored delivery and its event's type. */
export type ListedDelivery = DeliveryRecord & { readonly eventType: string };

/** Filters and page of {@link listRecentDeliveries}; `null` = no filter. */
interface DeliveryListQuery {
  readonly status: DeliveryStatus | null;
  readonly subscriptionId: string | null;
  readonly eventId: string | null;
  /** Strictly after this (updated_at, id). */
  readonly after: KeysetCursor | null;
  /** Rows per page, 1..100. */
  readonly pageSize: number;
}

/** One page of deliveries and the cursor of the next, `null` on the last page. */
interface DeliveryPage {
  readonly deliveries: ListedDelivery[];
  readonly next: KeysetCursor | null;
}

type ListedRow = Parameters<typeof toDeliveryRecord>[0] & { event_type: string };

/**
 * One page of deliveries, most recently updated first (ties by id, descending): the ones
 * an operator watches (being retried, just settled) come first. Keyset-paginated on
 * (updated_at, id); the filters given are all applied, each served by an index of
 * migrations/0006 (an event's deliveries by UNIQUE (event_id, subscription_id)).
 * Every write sets `updated_at` to the time of the write, so a delivery updated between
 * two page reads moves ahead of the cursor: the later pages miss it (none shows it
 * twice), a new first page has it.
 *
 * @param db - the D1 binding.
 * @param query - filters, cursor and page size.
 * @returns the page; `next` is set when at least one more row exists.
 * @throws {Error} when a row holds an unknown status; whatever D1 throws.
 */
export async function listRecentDeliveries(
  db: D1Database,
  query: DeliveryListQuery,
): Promise<DeliveryPage> {
  const page = await keysetPage<ListedRow>(
    db,
    {
      select: `SELECT d.*, e.event_type FROM deliveries AS d
        JOIN webhook_events AS e ON e.event_id = d.event_id`,
      keys: ['d.updated_at', 'd.id'],
      filters: [
        ['d.status = ?', query.status],
        ['d.subscription_id = ?', query.subscriptionId],
        ['d.event_id = ?', query.eventId],
      ],
      after: query.after,
      pageSize: query.pageSize,
    },
    (row) => ({ at: row.updated_at, id: row.id }),
  );
  const deliveries = page.rows.map((row) => ({
    ...toDeliveryRecord(row),
    eventType: row.event_type,
  }));
  return { deliveries, next: page.next };
}

/** The deliveries created in one hour, counted by their current status. */
export type HourlyDeliveryCounts = { readonly hour: number } & Record<DeliveryStatus, number>;

/**
 * Deliveries counted per UTC hour of `created_at`, under each one's current status, for
 * the `hours` hours ending with the one holding `now`: one GROUP BY over the
 * (created_at, status) index, then the hours without deliveries filled with zeros.
 *
 * @param db - the D1 binding.
 * @param hours - how many hours, at least 1.
 * @param now - the current time, epoch ms; its hour is the last bucket.
 * @returns exactly `hours` buckets, oldest first, `hour` the bucket's start (epoch ms, a
 *   whole UTC hour).
 * @throws whatever D1 throws.
 */
export async function countDeliveriesByHour(
  db: D1Database,
  hours: number,
  now: number,
): Promise<HourlyDeliveryCounts[]> {
  const firstHour = Math.floor(now / HOUR_MS) - (hours - 1);
  // Integer division of the INTEGER column by an integer literal: the hour number.
  const { results } = await db
    .prepare(
      `SELECT created_at / ${HOUR_MS} AS hour, status, COUNT(*) AS n FROM deliveries
       WHERE created_at >= ?1 AND created_at < ?2
       GROUP BY hour, status`,
    )
    .bind(firstHour * HOUR_MS, (firstHour + hours) * HOUR_MS)
    .all<{ hour: number; status: string; n: number }>();
  const buckets = Array.from({ length: hours }, (_, index) => ({
    hour: (firstHour + index) * HOUR_MS,
    pending: 0,
    delivered: 0,
    failed: 0,
  }));
  for (const row of results) {
    const bucket = buckets[row.hour - firstHour];
    const status = row.status as DeliveryStatus;
    if (bucket !== undefined && DELIVERY_STATUSES.includes(status)) bucket[status] = row.n;
  }
  return buckets;
}
