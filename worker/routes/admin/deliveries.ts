/**
 * The admin API's delivery routes (`/admin/deliveries`): the listing, counts by
 * delivery status, counts per hour, and retry of one delivery. Also the delivery view
 * shared with the event routes. The admin guard has already checked
 * `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import {
  countDeliveriesByHour,
  countDeliveriesByStatus,
  listRecentDeliveries,
  resetDelivery,
} from '../../db/admin-deliveries.ts';
import {
  DELIVERY_STATUSES,
  type DeliveryRecord,
  type DeliveryStatus,
  toDeliveryTargets,
} from '../../db/deliveries.ts';
import type { AttemptTrigger, DeliveryAttemptRecord } from '../../db/delivery-attempts.ts';
import { everyEventShard } from '../../db/event-shards.ts';
import { findDeliveryTargetInShards } from '../../db/subscription-targets.ts';
import { contextOf, settingsIn } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { MAX_EVENT_KEY_LENGTH } from '../../relay/envelope.ts';
import { enqueueRequestedDeliveries } from '../../relay/operator-request.ts';
import { OperatorNameSchema, operatorOf } from './operator.ts';
import {
  CursorQuerySchema,
  encodeCursor,
  exactTextQuery,
  MAX_PAGE_SIZE,
  wholeNumberQuery,
} from './query.ts';
import { refuseRetryOfDisabled } from './subscription-guard.ts';

/** Path of the delivery collection; one delivery is `${path}/:id`. */
export const ADMIN_DELIVERIES_PATH = '/admin/deliveries';

/** Deliveries per page of `GET /admin/deliveries` when `page_size` is absent. */
const DEFAULT_DELIVERY_PAGE_SIZE = 50;
/** Hours counted by `GET /admin/deliveries/hourly` when `hours` is absent: a day. */
const DEFAULT_HOURS = 24;
/** Most hours `GET /admin/deliveries/hourly` counts: a week. */
const MAX_HOURS = 168;
/** Longest id filter accepted, in characters: no stored event id is longer (nor subscription id). */
const MAX_ID_LENGTH = MAX_EVENT_KEY_LENGTH;

/**
 * The `GET /admin/deliveries` query, values as strings, strict: `status` (`pending` |
 * `delivered` | `failed`), `subscription_id`, `event_id` (exact ids), `page_size` (1 to
 * 100) and the opaque `cursor`.
 */
export const DeliveryListQuerySchema = v.strictObject({
  status: v.optional(v.picklist(DELIVERY_STATUSES)),
  subscription_id: exactTextQuery(MAX_ID_LENGTH, 'Only the deliveries to this subscription.'),
  event_id: exactTextQuery(MAX_ID_LENGTH, 'Only the deliveries of this event.'),
  page_size: wholeNumberQuery(
    MAX_PAGE_SIZE,
    `Deliveries per page, 1 to ${MAX_PAGE_SIZE}. Default ${DEFAULT_DELIVERY_PAGE_SIZE}.`,
  ),
  cursor: CursorQuerySchema,
});

/** The `GET /admin/deliveries/hourly` query, strict: `hours` (1 to 168). */
export const DeliveryHourlyQuerySchema = v.strictObject({
  hours: wholeNumberQuery(
    MAX_HOURS,
    `Hours counted, ending with the current one, 1 to ${MAX_HOURS}. Default ${DEFAULT_HOURS}.`,
  ),
});

/**
 * The optional `POST /admin/deliveries/:id/retry` body, strict: `operator` (who is
 * retrying, recorded on the attempt the retry causes).
 */
export const DeliveryRetrySchema = v.strictObject({ operator: v.optional(OperatorNameSchema) });

/** A delivery as the admin API shows it (times ISO 8601 UTC). */
export interface DeliveryView {
  id: string;
  event_id: string;
  subscription_id: string;
  status: DeliveryStatus;
  /** Attempts recorded so far. */
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  created_at: string;
  updated_at: string;
}

/** One attempt as the admin API shows it. */
interface DeliveryAttemptView {
  attempt: number;
  started_at: string;
  status: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
  /** What started it: the relay's schedule, or an operator's retry, replay or recovery. */
  trigger: AttemptTrigger;
  /** The operator's name, when one was given. */
  operator: string | null;
}

/**
 * The admin view of a delivery.
 *
 * @param record - the stored delivery.
 */
export function toDeliveryView(record: DeliveryRecord): DeliveryView {
  return {
    id: record.id,
    event_id: record.eventId,
    subscription_id: record.subscriptionId,
    status: record.status,
    attempts: record.attempts,
    next_attempt_at: record.nextAttemptAt === null ? null : iso(record.nextAttemptAt),
    last_status: record.lastStatus,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
  };
}

/**
 * The admin view of an attempt.
 *
 * @param record - the stored attempt.
 */
export function toDeliveryAttemptView(record: DeliveryAttemptRecord): DeliveryAttemptView {
  return {
    attempt: record.attempt,
    started_at: iso(record.startedAt),
    status: record.status,
    latency_ms: record.latencyMs,
    error: record.error,
    response_excerpt: record.responseExcerpt,
    trigger: record.trigger,
    operator: record.operator,
  };
}

/**
 * `POST /admin/deliveries/:id/retry`, body optional: `{ "operator"?: string }`. Resets the
 * delivery to `pending`, due now, whatever its status (a delivered one is sent again: the
 * admin asked for it), and enqueues it. Its attempt history is kept; the attempt this
 * causes is recorded with trigger `retry` and the operator (worker/routes/admin/operator.ts).
 * The delivery's id does not say which event shard holds it: every shard is asked at once,
 * and the one holding it is reset and named in the message.
 *
 * @param body - the validated body; `undefined` for a bare POST.
 * @returns 202 `{ status: 'success', data }`, `data` the reset delivery.
 * @throws {HttpError} 404 `not_found` (the delivery, or its deleted subscription); 409
 *   `subscription_disabled` with the disable's reason when its subscription is disabled
 *   (the consumer would skip it without an attempt).
 */
export async function retryDelivery(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof DeliveryRetrySchema> | undefined,
): Promise<Response> {
  const id = request.params.id ?? '';
  const operator = operatorOf(request, body?.operator);
  const now = Date.now();
  const shards = everyEventShard(env, settingsIn(contextOf(request)));
  const found = await findDeliveryTargetInShards(env.DB, shards, id);
  if (found !== undefined) refuseRetryOfDisabled(id, found);
  const record = found === undefined ? undefined : await resetDelivery(found.shard.db, id, now);
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (found === undefined || record === undefined) {
    throw new HttpError(404, 'not_found', `No delivery ${JSON.stringify(id)}`);
  }
  const row = { id: record.id, subscription_id: record.subscriptionId };
  await enqueueRequestedDeliveries(env.DELIVERIES, toDeliveryTargets([row], found.shard.name), {
    trigger: 'retry',
    operator,
    requestedAt: now,
  });
  logEvent('info', 'delivery_retried', {
    request_id: contextOf(request).requestId,
    delivery_id: record.id,
    operator,
  });
  return jsonResponse({ status: 'success', data: toDeliveryView(record) }, { status: 202 });
}

/**
 * `GET /admin/deliveries?status=&subscription_id=&event_id=&page_size=&cursor=`:
 * deliveries most recently updated first (ties by id, descending), the filters given all
 * applied, keyset-paginated like `GET /admin/events` (one page read from each event shard,
 * merged). A parameter given twice or unknown is refused.
 *
 * @returns 200 `{ status: 'success', data: [...], next_cursor }`, each item the delivery
 *   view plus its event's `event_type`; `next_cursor` `null` on the last page.
 * @throws {HttpError} 400 `validation_failed` with every issue.
 */
export async function listDeliveries(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  q: v.InferOutput<typeof DeliveryListQuerySchema>,
): Promise<Response> {
  const page = await listRecentDeliveries(shardDatabases(request, env), {
    status: q.status ?? null,
    subscriptionId: q.subscription_id ?? null,
    eventId: q.event_id ?? null,
    after: q.cursor ?? null,
    pageSize: q.page_size ?? DEFAULT_DELIVERY_PAGE_SIZE,
  });
  return jsonResponse({
    status: 'success',
    data: page.deliveries.map((delivery) => ({
      ...toDeliveryView(delivery),
      event_type: delivery.eventType,
    })),
    next_cursor: encodeCursor(page.next),
  });
}

/**
 * `GET /admin/deliveries/hourly?hours=`: deliveries counted per UTC hour of their
 * creation, under their current status (a delivery created at 10:15 and delivered at
 * 11:05 counts as delivered at 10:00), for a chart. Exactly `hours` buckets (default
 * 24), oldest first, the last one the current hour; hours without deliveries are zeros.
 * Every event shard is counted, summed by hour.
 *
 * @returns 200 `{ status: 'success', data: { hours: [{ hour, delivered, pending, failed }] } }`,
 *   `hour` the ISO 8601 start of the UTC hour.
 * @throws {HttpError} 400 `validation_failed` naming `hours`.
 */
export async function countDeliveriesHourly(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  q: v.InferOutput<typeof DeliveryHourlyQuerySchema>,
): Promise<Response> {
  const hours = q.hours ?? DEFAULT_HOURS;
  const buckets = await countDeliveriesByHour(shardDatabases(request, env), hours, Date.now());
  const counted = buckets.map((bucket) => ({
    hour: iso(bucket.hour),
    delivered: bucket.delivered,
    pending: bucket.pending,
    failed: bucket.failed,
  }));
  return jsonResponse({ status: 'success', data: { hours: counted } });
}

/**
 * `GET /admin/deliveries/counts`: every event shard's deliveries, summed.
 *
 * @returns 200 `{ status: 'success', data: { pending, delivered, failed, total } }`.
 */
export async function countDeliveries(request: IRequest, env: Env): Promise<Response> {
  const counts = await countDeliveriesByStatus(shardDatabases(request, env));
  const total = counts.pending + counts.delivered + counts.failed;
  return jsonResponse({ status: 'success', data: { ...counts, total } });
}

/**
 * The D1 databases of every event shard, under the request's settings.
 *
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding.
 */
export function shardDatabases(request: IRequest, env: Env): readonly D1Database[] {
  return everyEventShard(env, settingsIn(contextOf(request))).map((shard) => shard.db);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
