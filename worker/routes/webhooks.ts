import type { IRequest } from 'itty-router';
import { SignatureVerificationError, verifyRequestSignature } from '../../lib/index.ts';
import { parseJsonBody, readBody } from '../../lib/shared.ts';
import type { Settings } from '../config.ts';
import { placeEvent } from '../db/event-shards.ts';
import { UNCHECKED, type WebhookEventRecord } from '../db/webhook-events.ts';
import { withHttpErrors } from '../http/body.ts';
import { contextOf, settingsIn } from '../http/context.ts';
import { HttpError, InternalError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { jsonResponse } from '../http/respond.ts';
import { eventBucketName } from '../objects/buckets.ts';
import { enforceWebhookRateLimit } from '../rate-limit/enforce.ts';
import { type ConfirmationDecision, confirmsType, decideConfirmation } from '../relay/confirm.ts';
import { applyCheck, enqueueCheck, scheduleOutcome } from '../relay/confirmation-check.ts';
import { enqueueDeliveries } from '../relay/enqueue.ts';
import { referenceOf, WebhookEnvelopeSchema } from '../relay/envelope.ts';
import {
  type EventWrite,
  findStoredEvent,
  type StoreOutcome,
  writeWebhookEvent,
} from '../relay/event-store.ts';
import { announceUnconfirmed } from '../relay/operational-alerts.ts';
import { reservedNameIssues } from '../relay/operational-event-schemas.ts';

/** Path of the webhook ingress; open (no bearer token), the HMAC headers authenticate it. */
export const WEBHOOKS_PATH = '/webhooks';

/** Accepted skew of the provider's `X-Timestamp`, in seconds, past and future. */
export const WEBHOOK_TOLERANCE_SEC = 300;

/**
 * `POST /webhooks`, the relay's ingress. In order: the per-address rate limit
 * (`WEBHOOK_RATE_LIMIT_PER_MINUTE`, 429 with `Retry-After`); its own body limit
 * (`WEBHOOK_MAX_BODY_BYTES`, at most 1 MiB in every mode, since the body is read before
 * anything authenticates it; 413);
 * when `WEBHOOK_SECRET` is set, the provider's `X-Timestamp` / `X-Signature` over the exact
 * body bytes (300 s both ways, constant time; 401 `invalid_signature`); then lib's one JSON
 * body reader and the envelope schema (415, 400; 400 too for a type or id the relay keeps for
 * its own events, worker/relay/operational-event-schemas.ts). Money events are checked upstream through
 * the SDK (worker/relay/confirm.ts): a `confirmed` one fans out at once; one that cannot be
 * confirmed yet (no record yet, a state not final, the upstream down) is stored
 * `awaiting_confirmation` without delivery rows and a re-check is enqueued 10 s later
 * (worker/relay/confirmation-check.ts); an `unconfirmed` (contradicted) one is stored
 * without delivery rows, and `event.unconfirmed` is raised for the subscriptions that list
 * it. The raw body is stored in D1 keyed by `event_id` before the 200 (with more than one
 * generation of shards, by the event's own Durable Object, worker/objects/webhook-events.ts,
 * so copies placed apart store it once), with its `data.reference` (searched by the admin API), its check, and one `pending` delivery per
 * matching enabled subscription in the same transaction, then one
 * `{ deliveryId, subscriptionId }` message per delivery goes to `DELIVERIES`; a duplicate answers 200 with `duplicate: true` and
 * enqueues no delivery, and costs no upstream lookup: a stored event is found before the
 * money check, unless it is a byte-identical retry of an event still awaiting confirmation,
 * whose lookup may now confirm it (that is its first fan-out). With `WEBHOOK_SECRET` empty
 * the ingress answers 503 `configuration_error`, unless `ALLOW_UNSIGNED_WEBHOOKS` is `true`
 * (local development only): then unsigned webhooks are accepted, each logged as a warning.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `DB`, `DELIVERIES`, `WEBHOOK_SECRET`, `ALLOW_UNSIGNED_WEBHOOKS`, `WEBHOOK_MAX_BODY_BYTES`,
 *   `CONFIRM_MONEY_EVENTS` and the upstream settings (confirmation lookups).
 * @returns 200 `{ status: 'success', event_id, duplicate }`.
 * @throws {HttpError} 429, 413, 401, 415, 400, or 503 `configuration_error` (no secret),
 *   rendered by the router as the error body. An upstream that cannot answer is no error
 *   here: the event is stored awaiting confirmation and answered 200.
 * @throws {InternalError} 500 `internal_error` when D1 fails: nothing acknowledged, the
 *   provider retries.
 *
 * @example
 * ```ts
 * // its row of the route table (worker/routes/table.ts) serves it:
 * route('POST', WEBHOOKS_PATH, 'webhooks.ingest', 'webhook-signature', summary, ingestWebhook);
 * ```
 */
export async function ingestWebhook(request: IRequest, env: Env): Promise<Response> {
  const context = contextOf(request);
  const settings = settingsIn(context);
  // Counted before anything is read: the ingress is open, and its cost is per request.
  await enforceWebhookRateLimit(
    env,
    settings.webhooks.rateLimitPerMinute,
    request.headers,
    context.requestId,
  );
  const body = await withHttpErrors(() => readBody(request, settings.webhooks.maxBodyBytes));
  const { secret, allowUnsigned } = settings.webhooks;
  if (secret !== undefined) await verifySignature(secret, body, request.headers);
  else refuseUnlessUnsignedAllowed(allowUnsigned, context.requestId);
  // The signature covers the exact bytes, so they are checked before being parsed.
  const { text: rawBody, value: envelope } = await withHttpErrors(() =>
    parseJsonBody(body, request.headers.get('Content-Type'), WebhookEnvelopeSchema),
  );
  const reserved = reservedNameIssues(envelope);
  if (reserved.length > 0) {
    throw new HttpError(
      400,
      'validation_failed',
      "The event takes a name kept for the relay's own",
      {
        issues: reserved,
      },
    );
  }
  const event = {
    eventId: envelope.event_id,
    eventType: envelope.event_type,
    receivedAt: Date.now(),
    reference: referenceOf(envelope),
    rawBody,
  };
  // A copy of a stored event is answered before any upstream lookup: a signed body posted
  // again within its tolerance must not make the gateway query the payment service again.
  // Only a provider's retry, byte for byte, of an event still awaiting confirmation is
  // looked up, since the answer may settle it. Other event types are never looked up, so
  // their insert alone tells a copy: one D1 round trip fewer on the ingress.
  if (confirmsType(env, event.eventType)) {
    const existing = await storedEvent(env, settings, event.eventId, context.requestId);
    const settles = existing?.status === 'awaiting_confirmation' && existing.rawBody === rawBody;
    if (existing !== undefined && !settles) {
      logAccepted(context.requestId, event, { duplicate: true, status: existing.status }, secret);
      return jsonResponse({ status: 'success', event_id: event.eventId, duplicate: true });
    }
  }
  // Money events are checked upstream first: confirmed ones fan out at once, ones that
  // cannot be confirmed yet are stored awaiting a re-check, contradicted ones stay undelivered.
  const decision = await decideConfirmation(env, envelope, context.requestId);
  const checked = decision.reason !== null;
  const outcome = scheduleOutcome(decision, 1, event.receivedAt);
  const fansOut = outcome.status === 'received' || outcome.status === 'confirmed';
  // One transaction: the event and its delivery rows (a duplicate writes neither).
  const write = await store(env, settings, context.requestId, {
    event,
    status: outcome.status,
    confirmation: checked ? { ...outcome, checks: 1 } : UNCHECKED,
    fansOut,
  });
  const stored = write.kind === 'stored';
  const deliveries = write.kind === 'stored' ? write.deliveries : [];
  logAccepted(
    context.requestId,
    event,
    {
      duplicate: !stored,
      status: outcome.status,
      ...(checked ? { reason: outcome.reason } : {}),
      deliveries: deliveries.length,
    },
    secret,
  );
  if (write.kind === 'stored' && outcome.delaySeconds !== undefined) {
    const check = { eventId: event.eventId, check: 1, shard: write.shard };
    await enqueueCheck(env.DELIVERIES, check, outcome.delaySeconds);
  }
  if (stored && outcome.status === 'unconfirmed') {
    await announceUnconfirmed(
      env,
      { ...event, reason: outcome.reason, checks: 1 },
      event.receivedAt,
    );
  }
  if (!stored && checked) await settleAwaitingDuplicate(env, settings, event, decision);
  await enqueueDeliveries(env.DELIVERIES, deliveries, context.requestId);
  return jsonResponse({ status: 'success', event_id: event.eventId, duplicate: !stored });
}

/**
 * The stored event of this id, read before the upstream lookup a copy must not cost.
 *
 * @throws {InternalError} 500 `internal_error` when D1 fails (nothing acknowledged: the
 *   provider retries).
 */
async function storedEvent(
  env: Env,
  settings: Settings,
  eventId: string,
  requestId: string,
): Promise<WebhookEventRecord | undefined> {
  try {
    return (await findStoredEvent(env, settings, eventId, Date.now()))?.record;
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw storeFailed(requestId, eventId, error);
  }
}

/**
 * Stores the event where its id is placed (worker/relay/event-store.ts): with more than one
 * generation of shards, through its own object (worker/objects/webhook-events.ts), which
 * meets every copy of it, so copies placed in different shards are written one at a time.
 *
 * @throws {HttpError} 503 `configuration_error` (a shard binding missing).
 * @throws {InternalError} 500 `internal_error` when the object or D1 fails (nothing
 *   acknowledged).
 */
async function store(
  env: Env,
  settings: Settings,
  requestId: string,
  write: EventWrite,
): Promise<StoreOutcome> {
  const { eventId, receivedAt } = write.event;
  // Placed here, so a binding missing answers 503 before anything is written.
  const { home, others } = await placeEvent(env, settings, eventId, receivedAt);
  const placement = { home: home.name, others: others.map((shard) => shard.name) };
  try {
    // One generation: every copy has one place, whose primary key keeps all but the first out.
    if (settings.shards.length === 1) return await writeWebhookEvent(env, placement, write);
    const events = env.WEBHOOK_EVENTS.getByName(await eventBucketName(eventId));
    return await events.receive(write, placement);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw storeFailed(requestId, write.event.eventId, error);
  }
}

// Logs a failed read or write of the event store; the 500 it returns makes the provider retry.
function storeFailed(requestId: string, eventId: string, error: unknown): InternalError {
  logEvent('error', 'webhook_store_failed', {
    request_id: requestId,
    event_id: eventId,
    error_message: error instanceof Error ? error.message : String(error),
  });
  return new InternalError('webhook event not stored', { cause: error });
}

// The access facts of an accepted webhook (stored or a duplicate), and a warning when it was
// accepted unsigned.
function logAccepted(
  requestId: string,
  event: { readonly eventId: string; readonly eventType: string },
  facts: Record<string, unknown>,
  secret: string | undefined,
): void {
  if (secret === undefined) {
    logEvent('warn', 'webhook_unsigned_accepted', {
      request_id: requestId,
      event_id: event.eventId,
      event_type: event.eventType,
    });
  }
  logEvent('info', 'webhook_received', {
    request_id: requestId,
    event_id: event.eventId,
    event_type: event.eventType,
    deliveries: 0,
    ...facts,
  });
}

/**
 * A provider's retry of an event still awaiting confirmation: its lookup, just made,
 * settles the stored event when it is final (confirmed: fanned out now; contradicted:
 * `unconfirmed`). A "not yet" is not counted, so retries cannot run the schedule down
 * early; and only a retry with the very bytes stored may settle it.
 */
async function settleAwaitingDuplicate(
  env: Env,
  settings: Settings,
  event: { readonly eventId: string; readonly rawBody: string; readonly receivedAt: number },
  decision: ConfirmationDecision,
): Promise<void> {
  if (decision.status !== 'confirmed' && decision.status !== 'unconfirmed') return;
  const found = await findStoredEvent(env, settings, event.eventId, Date.now());
  const stored = found?.record;
  if (stored?.status !== 'awaiting_confirmation' || stored.rawBody !== event.rawBody) return;
  const checks = stored.confirmation?.checks ?? 0;
  await applyCheck(env, stored, checks, decision, Date.now(), found?.shard);
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
