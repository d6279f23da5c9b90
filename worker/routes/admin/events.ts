/**
 * The admin API's event routes (`/admin/events`): list events (filters,
 * keyset pagination), one event with its deliveries and their attempts, and replay.
 * The admin guard (`requireAdmin`, mounted on every admin route) has already checked `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { replayDeliveries } from '../../db/admin-deliveries.ts';
import { listWebhookEvents, type WebhookEventSummary } from '../../db/admin-queries.ts';
import { listEventDeliveries } from '../../db/deliveries.ts';
import { listDeliveryAttempts } from '../../db/delivery-attempts.ts';
import {
  appendForcedReplayStatement,
  type ForcedReplay,
  listForcedReplays,
} from '../../db/forced-replays.ts';
import {
  EVENT_OUTCOMES,
  findWebhookEvent,
  WEBHOOK_EVENT_STATUSES,
  type WebhookEventRecord,
} from '../../db/webhook-events.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { enqueueRequestedDeliveries } from '../../relay/operator-request.ts';
import { toDeliveryAttemptView, toDeliveryView } from './deliveries.ts';
import { AMOUNT_EVENT_TYPES, amountOf } from './event-amount.ts';
import { OperatorNameSchema, operatorOf } from './operator.ts';
import {
  CursorQuerySchema,
  encodeCursor,
  exactTextQuery,
  MAX_PAGE_SIZE,
  wholeNumberQuery,
} from './query.ts';
import { checkReplayTargets } from './subscription-guard.ts';

/** Path of the event collection; one event is `${path}/:id`. */
export const ADMIN_EVENTS_PATH = '/admin/events';

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
 * The optional `POST /admin/events/:id/replay` body, strict: `subscription_id` (one
 * subscription), `force` (`true` to replay an `unconfirmed` event) and `operator` (who is
 * replaying it, recorded on the attempts it causes and, when forced, on the event; 1 to
 * 100 printable ASCII characters).
 */
export const EventReplaySchema = v.strictObject({
  subscription_id: v.optional(v.pipe(v.string(), v.nonEmpty('Expected a non-empty string'))),
  force: v.optional(v.boolean()),
  operator: v.optional(OperatorNameSchema),
});

/**
 * `GET /admin/events?event_type=&status=&outcome=&reference=&reference_prefix=&event_id_prefix=&from=&to=&page_size=&cursor=`:
 * events newest first, the filters given all applied. `from` is inclusive, `to` exclusive
 * (ISO 8601, on `received_at`); `reference` matches `data.reference` exactly (case and spaces
 * included), `reference_prefix` and `event_id_prefix` match the start, case-sensitive; a
 * query parameter given twice or unknown is refused.
 *
 * @returns 200 `{ status: 'success', data: [...], next_cursor }`, each item
 *   `{ event_id, event_type, status, outcome, received_at, reference, amount, currency }`
 *   (`amount` in major units as the SDK parses the body, `null` with `currency` for events
 *   other than `charge_success`, `disbursement_success` and `direct_debit_success`),
 *   `next_cursor` `null` on the last page.
 * @throws {HttpError} 400 `validation_failed` with every issue.
 */
export async function listEvents(
  _request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  q: v.InferOutput<typeof EventListQuerySchema>,
): Promise<Response> {
  const page = await listWebhookEvents(env.DB, {
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
 * `GET /admin/events/:id`: the event as the list shows it (outcome, amount and currency
 * included) with its parsed `body` and exact `raw_body`, its
 * `confirmation` against the payment service (`null` when never checked, else `{ reason,
 * checks, checked_at, next_check_at }`: the last check's finding, how many checks were
 * made, when the last one was and when the next is due, ISO 8601 or `null`), its forced
 * replays (`forced_replays`, oldest first, each `{ at, by, from }`; `forced_replay` is the
 * latest or `null`), its deliveries (oldest first) and each one's `attempt_log` (first
 * attempt first).
 *
 * @throws {HttpError} 404 `not_found`.
 */
export async function getEvent(request: IRequest, env: Env): Promise<Response> {
  const event = await foundEvent(request, env);
  const deliveries = await listEventDeliveries(env.DB, event.eventId);
  const attempts = await Promise.all(deliveries.map((d) => listDeliveryAttempts(env.DB, d.id)));
  const forcedReplays = (await listForcedReplays(env.DB, event.eventId)).map(toForcedReplayView);
  const data = {
    ...toEventSummaryView(event),
    ...amountOf(event.rawBody),
    body: parseBody(event.rawBody),
    raw_body: event.rawBody,
    confirmation: toConfirmationView(event),
    forced_replay: forcedReplays.at(-1) ?? null,
    forced_replays: forcedReplays,
    deliveries: deliveries.map((delivery, index) => ({
      ...toDeliveryView(delivery),
      attempt_log: (attempts[index] ?? []).map(toDeliveryAttemptView),
    })),
  };
  return jsonResponse({ status: 'success', data });
}

/**
 * `POST /admin/events/:id/replay`, body optional: `{ "subscription_id"?: string }`.
 * Without it, every enabled subscription whose filter matches the event; with it, that
 * subscription alone (its filter is not applied: the admin chose it). Each gets a
 * `pending` delivery due now: a new row, or its existing row reset (UNIQUE
 * (event_id, subscription_id); attempts kept), then one message per delivery; the attempts
 * this causes are recorded with trigger `replay` and the operator (the Cloudflare Access
 * user, else the body's `operator`; worker/routes/admin/operator.ts).
 *
 * An `unconfirmed` event (the payment service contradicted it, or never confirmed it) or
 * one still `awaiting_confirmation` is replayed only with `"force": true` (a replay would
 * deliver money the service has not confirmed); who forced it (the operator, else `admin`), from which address and when
 * is appended to the event's forced-replay history in the same transaction (never
 * overwritten), and shown by `GET /admin/events/:id` as `forced_replays`.
 *
 * @param body - the validated body; `undefined` for a bare POST (no Content-Type, no or a
 *   zero Content-Length), which means "all". Its row reads it first (415, 413, or 400
 *   `validation_failed` for a bad body).
 * A disabled subscription gets nothing (the consumer would skip its delivery without an
 * attempt): named in `subscription_id`, or the only ones matching, it answers 409
 * `subscription_disabled` with the reason; among enabled matches it is skipped and listed in
 * `skipped_subscriptions` (`{ subscription_id, reason }`).
 *
 * @returns 202 `{ status: 'success', data: { event_id, delivery_ids, skipped_subscriptions } }`.
 * @throws {HttpError} 409 `event_unconfirmed` for an `unconfirmed` or
 *   `awaiting_confirmation` event without `"force": true`; 404 `not_found` (event, or the
 *   named subscription); 409 `subscription_disabled`.
 */
export async function replayEvent(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof EventReplaySchema> | undefined,
): Promise<Response> {
  const subscriptionId = body?.subscription_id ?? null;
  const operator = operatorOf(request, body?.operator);
  const event = await foundEvent(request, env);
  const now = Date.now();
  let forced: ForcedReplay | undefined;
  if (event.status === 'unconfirmed' || event.status === 'awaiting_confirmation') {
    // The payment service has not confirmed this money event: delivering it could make a
    // subscriber ship goods or credit a wallet for money that never arrived.
    if (body?.force !== true) {
      const state = event.status === 'unconfirmed' ? 'was not' : 'is not yet';
      throw new HttpError(
        409,
        'event_unconfirmed',
        `Event ${JSON.stringify(event.eventId)} ${state} confirmed by the payment service; ` +
          'send {"force": true} to replay it anyway',
      );
    }
    forced = {
      at: now,
      by: operator ?? 'admin',
      from: request.headers.get('CF-Connecting-IP') ?? 'unknown',
    };
  }
  // A disabled subscription's delivery would be skipped without an attempt: refused when
  // it is the only target, else skipped and named in the answer.
  const skipped = await checkReplayTargets(env.DB, event, subscriptionId);
  const before =
    forced === undefined ? [] : [appendForcedReplayStatement(env.DB, event.eventId, forced)];
  const ids = await replayDeliveries(env.DB, event, subscriptionId, now, before);
  await enqueueRequestedDeliveries(env.DELIVERIES, ids, {
    trigger: 'replay',
    operator,
    requestedAt: now,
  });
  logEvent(forced === undefined ? 'info' : 'warn', 'event_replayed', {
    request_id: contextOf(request).requestId,
    event_id: event.eventId,
    deliveries: ids.length,
    operator,
    ...(forced === undefined
      ? {}
      : { forced: true, forced_by: forced.by, forced_from: forced.from }),
  });
  return jsonResponse(
    {
      status: 'success',
      data: { event_id: event.eventId, delivery_ids: ids, skipped_subscriptions: skipped },
    },
    { status: 202 },
  );
}

function toForcedReplayView(forced: ForcedReplay) {
  return { at: new Date(forced.at).toISOString(), by: forced.by, from: forced.from };
}

function toEventSummaryView(event: WebhookEventSummary | WebhookEventRecord) {
  return {
    event_id: event.eventId,
    event_type: event.eventType,
    status: event.status,
    outcome: event.outcome,
    received_at: new Date(event.receivedAt).toISOString(),
    reference: event.reference,
  };
}

function toConfirmationView({ confirmation }: WebhookEventRecord) {
  if (confirmation === undefined) return null;
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    reason: confirmation.reason,
    checks: confirmation.checks,
    checked_at: iso(confirmation.checkedAt),
    next_check_at: iso(confirmation.nextCheckAt),
  };
}

async function foundEvent(request: IRequest, env: Env): Promise<WebhookEventRecord> {
  const id = request.params.id ?? '';
  const event = await findWebhookEvent(env.DB, id);
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (event === undefined) throw new HttpError(404, 'not_found', `No event ${JSON.stringify(id)}`);
  return event;
}

function parseBody(rawBody: string): unknown {
  try {
    return JSON.parse(rawBody);
  } catch {
    // The ingress stores validated JSON only; a row that is not stays readable as raw_body.
    return null;
  }
}
