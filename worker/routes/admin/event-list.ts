/**
 * The admin API's event list (`GET /admin/events`): its query (filters, prefix search,
 * keyset cursor) and the handler, and the summary view of an event that the detail route
 * (./events.ts) shows too. The admin guard has already checked `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { listWebhookEvents, type WebhookEventSummary } from '../../db/admin-queries.ts';
import {
  EVENT_OUTCOMES,
  WEBHOOK_EVENT_STATUSES,
  type WebhookEventRecord,
} from '../../db/webhook-events.ts';
import { jsonResponse } from '../../http/respond.ts';
import { shardDatabases } from './deliveries.ts';
import { AMOUNT_EVENT_TYPES, amountOf } from './event-amount.ts';
import {
  CursorQuerySchema,
  encodeCursor,
  exactTextQuery,
  MAX_PAGE_SIZE,
  wholeNumberQuery,
} from './query.ts';

/** Rows per page when `page_size` is absent. */
const DEFAULT_PAGE_SIZE = 10;
/** Longest `reference` searched for, in characters. */
const MAX_REFERENCE_LENGTH = 255;

/**
 * The `event_id_prefix` parameter: 1 to 255 visible ASCII characters, as an `event_id` is
 * (worker/relay/envelope.ts), so a prefix no id can start with is refused, not searched.
 */
const EventIdPrefixQuery = v.optional(
  v.pipe(
    v.string(),
    v.description(
      'The `event_id` starts with it (case-sensitive), 1 to 255 visible ASCII characters.',
    ),
    v.regex(/^[\x21-\x7e]{1,255}$/, 'Expected 1 to 255 visible ASCII characters'),
  ),
);

const isoTime = v.pipe(
  v.string(),
  v.isoTimestamp('Expected an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z'),
  v.transform((value) => Date.parse(value)),
  v.check((ms) => Number.isFinite(ms), 'Expected a valid date-time'),
);

/**
 * The `GET /admin/events` query, values as strings: `event_type`, `status`
 * (`received` | `awaiting_confirmation` | `confirmed` | `unconfirmed`), `outcome` (an
 * {@link EVENT_OUTCOMES} value), `reference` (exact match on the event's `data.reference`, 1
 * to {@link MAX_REFERENCE_LENGTH} characters), `reference_prefix` and `event_id_prefix`
 * (case-sensitive prefixes), `from` / `to` (ISO 8601, `to` later than `from`: a `check`),
 * `page_size` (1 to 100) and the opaque `cursor`.
 * Strict: a misspelt filter (`type`) is refused rather than silently listing everything.
 */
export const EventListQuerySchema = v.pipe(
  v.strictObject({
    event_type: v.optional(v.pipe(v.string(), v.nonEmpty('Expected a non-empty string'))),
    status: v.optional(v.picklist(WEBHOOK_EVENT_STATUSES)),
    outcome: v.optional(
      v.pipe(
        v.picklist(EVENT_OUTCOMES),
        v.description(
          'Whether the event reached its subscribers: `failed` (a delivery failed for good), ' +
            '`failing` (a delivery pending after a failed attempt), `pending` (a delivery not ' +
            'attempted yet), `held` (not fanned out: awaiting confirmation or unconfirmed), ' +
            '`delivered` (every delivery delivered), `no_subscriber` (no delivery).',
        ),
      ),
    ),
    reference: exactTextQuery(
      MAX_REFERENCE_LENGTH,
      "Exact match on the event body's `data.reference`.",
    ),
    reference_prefix: exactTextQuery(
      MAX_REFERENCE_LENGTH,
      "The event body's `data.reference` starts with it (case-sensitive).",
    ),
    event_id_prefix: EventIdPrefixQuery,
    from: v.optional(isoTime),
    to: v.optional(isoTime),
    page_size: wholeNumberQuery(
      MAX_PAGE_SIZE,
      `Events per page, 1 to ${MAX_PAGE_SIZE}. Default ${DEFAULT_PAGE_SIZE}.`,
    ),
    cursor: CursorQuerySchema,
  }),
  v.forward(
    v.check(
      (q) => q.from === undefined || q.to === undefined || q.from < q.to,
      'Expected `to` to be later than `from`',
    ),
    ['to'],
  ),
);

/**
 * `GET /admin/events?event_type=&status=&outcome=&reference=&reference_prefix=&event_id_prefix=&from=&to=&page_size=&cursor=`:
 * events newest first, the filters given all applied. `from` is inclusive, `to` exclusive
 * (ISO 8601, on `received_at`); `reference` matches `data.reference` exactly (case and spaces
 * included), `reference_prefix` and `event_id_prefix` match the start, case-sensitive; a
 * query parameter given twice or unknown is refused. With events spread over several D1
 * databases, each gives one page after the same cursor and the newest of them make the page.
 *
 * @returns 200 `{ status: 'success', data: [...], next_cursor }`, each item
 *   `{ event_id, event_type, status, outcome, received_at, reference, amount, currency }`
 *   (`amount` in major units as the SDK parses the body, `null` with `currency` for events
 *   other than `charge_success`, `disbursement_success` and `direct_debit_success`),
 *   `next_cursor` `null` on the last page.
 * @throws {HttpError} 400 `validation_failed` with every issue.
 */
export async function listEvents(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  q: v.InferOutput<typeof EventListQuerySchema>,
): Promise<Response> {
  const page = await listWebhookEvents(shardDatabases(request, env), {
    eventType: q.event_type ?? null,
    status: q.status ?? null,
    outcome: q.outcome ?? null,
    reference: q.reference ?? null,
    referencePrefix: q.reference_prefix ?? null,
    eventIdPrefix: q.event_id_prefix ?? null,
    from: q.from ?? null,
    to: q.to ?? null,
    after: q.cursor ?? null,
    pageSize: q.page_size ?? DEFAULT_PAGE_SIZE,
    bodyTypes: AMOUNT_EVENT_TYPES,
  });
  return jsonResponse({
    status: 'success',
    data: page.events.map((event) => ({
      ...toEventSummaryView(event),
      ...amountOf(event.rawBody),
    })),
    next_cursor: encodeCursor(page.next),
  });
}

/**
 * An event as the list shows it: id, type, confirmation `status`, delivery `outcome`, receive
 * time (ISO 8601) and reference.
 *
 * @param event - the listed summary or the stored record.
 */
export function toEventSummaryView(event: WebhookEventSummary | WebhookEventRecord) {
  return {
    event_id: event.eventId,
    event_type: event.eventType,
    status: event.status,
    outcome: event.outcome,
    received_at: new Date(event.receivedAt).toISOString(),
    reference: event.reference,
  };
}
