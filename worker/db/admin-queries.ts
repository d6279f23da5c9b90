/**
 * D1 queries of the admin API's event listing (`GET /admin/events`): events newest first,
 * keyset-paginated. The admin's delivery queries are in worker/db/admin-deliveries.ts.
 * Every time is epoch milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */
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
