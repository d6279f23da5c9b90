import type { IRequest } from 'itty-router';
import { SignatureVerificationError, verifyRequestSignature } from '../../lib/index.ts';
import { parseJsonBody, readBody } from '../../lib/shared.ts';
import { settingsOf } from '../config.ts';
import { fanOutDeliveriesStatement } from '../db/deliveries.ts';
import { insertWebhookEventStatement } from '../db/webhook-events.ts';
import { withHttpErrors } from '../http/body.ts';
import { contextOf } from '../http/context.ts';
import { HttpError, InternalError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { jsonResponse } from '../http/respond.ts';
import { confirmWebhookEvent } from '../relay/confirm.ts';
import type { DeliveryMessage } from '../relay/consumer.ts';
import { referenceOf, WebhookEnvelopeSchema } from '../relay/envelope.ts';

/** Path of the webhook ingress; open (no bearer token), the HMAC headers authenticate it. */
export const WEBHOOKS_PATH = '/webhooks';

/** Accepted skew of the provider's `X-Timestamp`, in seconds, past and future. */
export const WEBHOOK_TOLERANCE_SEC = 300;

/**
 * `POST /webhooks`, the relay's ingress. In order: the body limit (`MAX_BODY_BYTES`, 413);
 * when `WEBHOOK_SECRET` is set, the provider's `X-Timestamp` / `X-Signature` over the exact
 * body bytes (300 s both ways, constant time; 401 `invalid_signature`); then lib's one JSON
 * body reader and the envelope schema (415, 400). Money events are confirmed upstream
 * through the SDK (worker/relay/confirm.ts): an `unconfirmed` one is stored without
 * delivery rows, and an upstream that cannot answer makes this a 503 with nothing stored,
 * so the provider retries. The raw body is stored in D1 keyed by `event_id` before the
 * 200, with its `data.reference` (searched by the admin API) and one `pending` delivery
 * per matching enabled subscription in the same transaction, then one `{ deliveryId }`
 * message per delivery goes to `DELIVERIES`; a duplicate answers 200 with
 * `duplicate: true` and changes and enqueues nothing. With `WEBHOOK_SECRET` empty the
 * ingress answers 503 `configuration_error`, unless `ALLOW_UNSIGNED_WEBHOOKS` is `true`
 * (local development only): then unsigned webhooks are accepted, each logged as a warning.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `DB`, `DELIVERIES`, `WEBHOOK_SECRET`, `ALLOW_UNSIGNED_WEBHOOKS`, `MAX_BODY_BYTES`,
 *   `CONFIRM_MONEY_EVENTS` and the upstream settings (confirmation lookups).
 * @returns 200 `{ status: 'success', event_id, duplicate }`.
 * @throws {HttpError} 413, 401, 415, 400, 503 `configuration_error` (no secret), or 503
 *   `upstream_unreachable` (confirmation),
 *   rendered by the router as the error body.
 * @throws {InternalError} 500 `internal_error` when D1 fails: nothing acknowledged, the
 *   provider retries.
 *
 * @example
 * ```ts
 * // worker/router.ts registers it from the route table as `webhooks.ingest`:
 * const HANDLERS = { 'webhooks.ingest': ingestWebhook, ... };
 * ```
 */
export async function ingestWebhook(request: IRequest, env: Env): Promise<Response> {
  const context = contextOf(request);
  const settings = settingsOf(env);
  const body = await withHttpErrors(() => readBody(request, settings.maxBodyBytes));
  const { secret, allowUnsigned } = settings.webhooks;
  if (secret !== undefined) await verifySignature(secret, body, request.headers);
  else refuseUnlessUnsignedAllowed(allowUnsigned, context.requestId);
  // The signature covers the exact bytes, so they are checked before being parsed.
  const { text: rawBody, value: envelope } = await withHttpErrors(() =>
    parseJsonBody(body, request.headers.get('Content-Type'), WebhookEnvelopeSchema),
  );
  const event = {
    eventId: envelope.event_id,
    eventType: envelope.event_type,
    receivedAt: Date.now(),
    reference: referenceOf(envelope),
    rawBody,
  };
  // Money events are confirmed upstream first; unconfirmed ones are stored without
  // delivery rows. Throws 503 (nothing stored) when the upstream is down.
  const status = await confirmWebhookEvent(env, envelope, context.requestId);
  let stored: boolean;
  let deliveryIds: string[];
  try {
    // One transaction: the event and its delivery rows (a duplicate writes neither).
    const insert = insertWebhookEventStatement(env.DB, event, status);
    const [inserted, fanOut] = await env.DB.batch<{ id: string }>(
      status === 'unconfirmed' ? [insert] : [insert, fanOutDeliveriesStatement(env.DB, event)],
    );
    stored = inserted?.meta.changes === 1;
    deliveryIds = stored ? (fanOut?.results ?? []).map((row) => row.id) : [];
  } catch (error) {
    logEvent('error', 'webhook_store_failed', {
      request_id: context.requestId,
      event_id: event.eventId,
      error_message: error instanceof Error ? error.message : String(error),
    });
    throw new InternalError('webhook event not stored', { cause: error });
  }
  if (secret === undefined) {
    logEvent('warn', 'webhook_unsigned_accepted', {
      request_id: context.requestId,
      event_id: event.eventId,
      event_type: event.eventType,
    });
  }
  logEvent('info', 'webhook_received', {
    request_id: context.requestId,
    event_id: event.eventId,
    event_type: event.eventType,
    duplicate: !stored,
    status,
    deliveries: deliveryIds.length,
  });
  await enqueueDeliveries(env.DELIVERIES, deliveryIds, context.requestId);
  return jsonResponse({ status: 'success', event_id: event.eventId, duplicate: !stored });
}

/** Most messages per `sendBatch` call (the Queues limit). */
const SEND_BATCH_MAX = 100;

/**
 * Enqueues one `{ deliveryId }` message per delivery, after the D1 write. A failure is
 * logged, not answered 500: the event and its deliveries are stored, a provider retry
 * would be a duplicate that fans out nothing, and the sweeper slice re-enqueues
 * deliveries stored but never enqueued (the same heals a crash between the two).
 */
async function enqueueDeliveries(
  queue: Queue<DeliveryMessage>,
  deliveryIds: readonly string[],
  requestId: string,
): Promise<void> {
  try {
    for (let start = 0; start < deliveryIds.length; start += SEND_BATCH_MAX) {
      const chunk = deliveryIds.slice(start, start + SEND_BATCH_MAX);
      await queue.sendBatch(chunk.map((deliveryId) => ({ body: { deliveryId } })));
    }
  } catch (error) {
    logEvent('error', 'delivery_enqueue_failed', {
      request_id: requestId,
      deliveries: deliveryIds.length,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * Without `WEBHOOK_SECRET` (possible in local mode only) nothing proves an event came
 * from the payment service, so the ingress is closed unless `ALLOW_UNSIGNED_WEBHOOKS` is on.
 *
 * @throws {HttpError} 503 `configuration_error` (logged) when unsigned webhooks are not allowed.
 */
function refuseUnlessUnsignedAllowed(allowUnsigned: boolean, requestId: string): void {
  if (allowUnsigned) return;
  logEvent('error', 'configuration_error', {
    request_id: requestId,
    setting: 'WEBHOOK_SECRET',
    problem: 'not set, and ALLOW_UNSIGNED_WEBHOOKS is off: webhooks are refused',
  });
  throw new HttpError(
    503,
    'configuration_error',
    'The webhook ingress is not configured: WEBHOOK_SECRET is not set',
  );
}

/** @throws {HttpError} 401 `invalid_signature` when the headers are missing, stale or wrong. */
async function verifySignature(secret: string, body: Uint8Array, headers: Headers): Promise<void> {
  try {
    await verifyRequestSignature({ secret, body, headers, toleranceSec: WEBHOOK_TOLERANCE_SEC });
  } catch (error) {
    // The reasons (missing header, skew, mismatch) name no secret: they help the provider.
    if (error instanceof SignatureVerificationError) {
      throw new HttpError(401, 'invalid_signature', `Invalid webhook signature: ${error.message}`);
    }
    throw error;
  }
}
