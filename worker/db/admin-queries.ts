/**
 * D1 queries of the admin API's event listing (`GET /admin/events`): events newest first,
 * keyset-paginated, over every event shard. The admin's delivery queries are in
 * worker/db/admin-deliveries.ts. Every time is epoch milliseconds; statements bind with `?N`.
 */
import { expandNullableText, type StoredValue } from './compact-body.ts';
import type { KeysetCursor } from './keyset.ts';
import { databasesOf, mergedKeysetPage } from './merged-pages.ts';
import {
  type EventOutcome,
  toWebhookEventFields,
  type WebhookEventFieldsRow,
  type WebhookEventStatus,
} from './webhook-events.ts';

/** An event as the listing shows it: no body (the detail route has it). */
export interface WebhookEventSummary {
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookEventStatus;
  /** Whether it reached its subscribers (migrations/0012). */
  readonly outcome: EventOutcome;
  readonly receivedAt: number;
  /** The body's `data.reference` when it is a string, else `null`. */
  readonly reference: string | null;
  /** The stored body of a type in `bodyTypes` of the query, else `null` (not read). */
  readonly rawBody: string | null;
}

/** Filters and page of {@link listWebhookEvents}; `null` = no filter. */
interface EventListQuery {
  readonly eventType: string | null;
  readonly status: WebhookEventStatus | null;
  readonly outcome: EventOutcome | null;
  /** Exact match on the stored `data.reference`. */
  readonly reference: string | null;
  /** The stored `data.reference` starts with it (case-sensitive). */
  readonly referencePrefix: string | null;
  /** The `event_id` starts with it (case-sensitive). */
  readonly eventIdPrefix: string | null;
  /** Inclusive lower bound on `received_at`, epoch ms. */
  readonly from: number | null;
  /** Exclusive upper bound on `received_at`, epoch ms. */
  readonly to: number | null;
  /** Strictly after this (received_at, event_id). */
  readonly after: KeysetCursor | null;
  /** Rows per page, 1..100. */
  readonly pageSize: number;
  /** The event types whose stored body is read too (constant names, never input). */
  readonly bodyTypes: readonly string[];
}

/** One page of events and the cursor of the next, `null` on the last page. */
interface EventPage {
  readonly events: WebhookEventSummary[];
  readonly next: KeysetCursor | null;
}

type SummaryRow = WebhookEventFieldsRow & { raw_body: StoredValue | null };

/**
 * One page of events, newest first (ties by `event_id`, descending), keyset-paginated
 * on (received_at, event_id). Each filter given is a plain comparison the index starting
 * with its column serves (migrations/0002, 0006, 0012): an outcome reads the page's rows and
 * one more; a prefix is a range `>= prefix AND < successor` on the reference index or the
 * primary key (SQLite's LIKE folds ASCII case and, with its default settings, uses no index),
 * so it reads the index entries of the matching events only, never the whole table.
 * Over several event shards each reads one such page with the same cursor and the newest
 * rows of them all make the page (worker/db/merged-pages.ts); only those bodies are expanded.
 *
 * @param db - the D1 binding holding the events, or every event shard's.
 * @param query - filters, cursor, page size and the types whose body is read.
 * @returns the page; `next` is set when at least one more row exists.
 * @throws {Error} when a row holds an unknown outcome; whatever D1 throws.
 */
export async function listWebhookEvents(
  db: D1Database | readonly D1Database[],
  query: EventListQuery,
): Promise<EventPage> {
  const reference = prefixRange(query.referencePrefix);
  const eventId = prefixRange(query.eventIdPrefix);
  // The types are constants of the code, quoted as SQL text; nothing from the request.
  const types = query.bodyTypes.map((type) => `'${type.replaceAll("'", "''")}'`).join(', ');
  const body = types === '' ? 'NULL' : `CASE WHEN event_type IN (${types}) THEN raw_body END`;
  const page = await mergedKeysetPage<SummaryRow>(
    databasesOf(db),
    {
      select: `SELECT event_id, event_type, status, outcome, received_at, reference,
        ${body} AS raw_body FROM webhook_events`,
      keys: ['received_at', 'event_id'],
      filters: [
        ['event_type = ?', query.eventType],
        ['status = ?', query.status],
        ['outcome = ?', query.outcome],
        ['reference = ?', query.reference],
        ['reference >= ?', reference.from],
        ['reference < ?', reference.before],
        ['event_id >= ?', eventId.from],
        ['event_id < ?', eventId.before],
        ['received_at >= ?', query.from],
        ['received_at < ?', query.to],
      ],
      after: query.after,
      pageSize: query.pageSize,
    },
    (row) => ({ at: row.received_at, id: row.event_id }),
  );
  const events = await Promise.all(
    page.rows.map(async (row) => ({
      ...toWebhookEventFields(row),
      // Stored compressed when that is smaller (worker/db/compact-body.ts).
      rawBody: await expandNullableText(row.raw_body),
    })),
  );
  return { events, next: page.next };
}

/** The text range of a prefix: `from` inclusive, `before` exclusive (`null`: no bound). */
interface PrefixRange {
  readonly from: string | null;
  readonly before: string | null;
}

/**
 * The range of texts that start with `prefix`, in SQLite's BINARY order (UTF-8 bytes, which
 * is code point order): from the prefix itself to its successor, the prefix with its last
 * code point raised by one (`pay_z` -> `pay_{`). A last code point that cannot be raised
 * (U+10FFFF) is dropped and the one before is raised; a prefix of nothing else has no upper
 * bound (every text from it on starts with it). The surrogate block is skipped: it holds no
 * character, so U+D7FF's successor is U+E000.
 *
 * @param prefix - the prefix, or `null` for no filter.
 * @returns the bounds; both `null` for no filter.
 *
 * @internal Exported for the tests, which check the boundaries directly.
 */
export function prefixRange(prefix: string | null): PrefixRange {
  if (prefix === null) return { from: null, before: null };
  const points = Array.from(prefix, (char) => char.codePointAt(0) ?? 0);
  while (points.length > 0) {
    const last = points.pop() ?? 0;
    if (last < 0x10ffff) {
      points.push(last === 0xd7ff ? 0xe000 : last + 1);
      return { from: prefix, before: String.fromCodePoint(...points) };
    }
  }
  return { from: prefix, before: null };
}
