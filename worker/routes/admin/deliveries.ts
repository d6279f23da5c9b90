/**
 * The admin API's delivery routes (`/admin/deliveries`): retry one delivery,
 * and counts by delivery status. Also the delivery view and the enqueue shared with
 * the event routes' replay. The admin guard has already checked `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import { countDeliveriesByStatus, resetDelivery } from '../../db/admin-queries.ts';
import type { DeliveryAttemptRecord, DeliveryRecord } from '../../db/deliveries.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import type { DeliveryMessage } from '../../relay/consumer.ts';

/** Path of the delivery collection; one delivery is `${path}/:id`. */
export const ADMIN_DELIVERIES_PATH = '/admin/deliveries';

/** Most messages per `sendBatch` call (the Queues limit). */
const SEND_BATCH_MAX = 100;

/** A delivery as the admin API shows it (times ISO 8601 UTC). */
interface DeliveryView {
  id: string;
  event_id: string;
  subscription_id: string;
  status: string;
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
  };
}

/**
 * Sends one `{ deliveryId }` message per delivery to `DELIVERIES`, in chunks of 100.
 * A failure propagates (the caller answers 500); the rows are already pending and due,
 * so the sweeper re-enqueues them and the admin may simply retry.
 *
 * @param queue - the `DELIVERIES` producer.
 * @param deliveryIds - the deliveries to enqueue.
 * @throws whatever the producer throws.
 */
export async function enqueueDeliveryIds(
  queue: Queue<DeliveryMessage>,
  deliveryIds: readonly string[],
): Promise<void> {
  for (let start = 0; start < deliveryIds.length; start += SEND_BATCH_MAX) {
    const chunk = deliveryIds.slice(start, start + SEND_BATCH_MAX);
    await queue.sendBatch(chunk.map((deliveryId) => ({ body: { deliveryId } })));
  }
}

/**
 * `POST /admin/deliveries/:id/retry`: resets the delivery to `pending`, due now,
 * whatever its status (a delivered one is sent again: the admin asked for it), and
 * enqueues it. Its attempt history is kept.
 *
 * @returns 202 `{ status: 'success', data }`, `data` the reset delivery.
 * @throws {HttpError} 404 `not_found`.
 */
export async function retryDelivery(request: IRequest, env: Env): Promise<Response> {
  const id = request.params.id ?? '';
  const record = await resetDelivery(env.DB, id, Date.now());
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (record === undefined) {
    throw new HttpError(404, 'not_found', `No delivery ${JSON.stringify(id)}`);
  }
  await enqueueDeliveryIds(env.DELIVERIES, [record.id]);
  logEvent('info', 'delivery_retried', {
    request_id: contextOf(request).requestId,
    delivery_id: record.id,
  });
  return jsonResponse({ status: 'success', data: toDeliveryView(record) }, { status: 202 });
}

/**
 * `GET /admin/deliveries/counts`.
 *
 * @returns 200 `{ status: 'success', data: { pending, delivered, failed, total } }`.
 */
export async function countDeliveries(_request: IRequest, env: Env): Promise<Response> {
  const counts = await countDeliveriesByStatus(env.DB);
  const total = counts.pending + counts.delivered + counts.failed;
  return jsonResponse({ status: 'success', data: { ...counts, total } });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
