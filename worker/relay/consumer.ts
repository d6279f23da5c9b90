/**
 * The relay's queue consumer: delivers each `{ deliveryId }` message of the DELIVERIES
 * queue to its subscriber, signed with Standard Webhooks, re-checks the money event of each
 * `{ kind: 'confirm', eventId, check }` message (worker/relay/confirmation-check.ts), and
 * marks dead-lettered deliveries `failed`. Every message is acked or retried on its own, never the batch,
 * so one slow or failing subscriber does not hold back the others. The outcomes per
 * answer are listed in docs/gateway.md, "Webhook relay".
 */

import { parseRetryAfter } from '../../lib/shared.ts';
import { loadSettings } from '../config.ts';
import {
  type AttemptOutcome,
  findDelivery,
  markDeliveryFailed,
  recordDeliveryAttempt,
} from '../db/deliveries.ts';
import {
  findSubscription,
  type SubscriptionRecord,
  updateSubscription,
} from '../db/subscriptions.ts';
import { findWebhookEvent } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { consumeConfirmationMessage, isConfirmationMessage } from './confirmation-check.ts';
import { retryDelay } from './retry-schedule.ts';
import { sendDelivery } from './send-delivery.ts';
import { standardWebhookHeaders } from './standard-webhooks.ts';
import { checkSubscriberHost } from './subscriber-dns.ts';
import { checkSubscriptionUrl } from './subscription-url.ts';

/** The deliveries queue (wrangler.toml): one message per (event, subscription). */
export const DELIVERIES_QUEUE = 'edgepay-deliveries';

/** Its dead-letter queue: messages whose attempts ran out. */
export const DELIVERIES_DEAD_LETTER_QUEUE = 'edgepay-deliveries-dlq';

/**
 * The body of a deliveries message: ids only, the consumer reads the rest from D1. The
 * same queue carries re-checks of money events (`ConfirmationMessage`, told apart by its
 * `kind: 'confirm'`), so their short delays need no second queue.
 */
export interface DeliveryMessage {
  /** `dlv_<uuid>`. */
  readonly deliveryId: string;
}

/**
 * Whether a message body is a {@link DeliveryMessage}.
 *
 * @param body - the message body as received.
 */
function isDeliveryMessage(body: unknown): body is DeliveryMessage {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { deliveryId?: unknown }).deliveryId === 'string'
  );
}

/** Options of {@link handleQueueBatch}. */
interface QueueOptions {
  /** The fetch for DNS-over-HTTPS lookups and deliveries. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/**
 * The Worker's `queue` handler: by `batch.queue`, delivers (DELIVERIES) or marks failed
 * (its dead-letter queue), each message concurrently and acked or retried on its own.
 * An unexpected error retries that message on the schedule; an unknown queue retries all.
 *
 * @param batch - the batch from Cloudflare Queues.
 * @param env - bindings (`DB`) and settings (`ALLOW_LOCAL_SUBSCRIBERS`,
 *   `SUBSCRIBER_PORTS`, `SUBSCRIBER_DNS_RESOLVER`).
 * @param options - the fetch to use (tests pass a fake network).
 *
 * @example
 * ```ts
 * export default { queue: (batch, env) => handleQueueBatch(batch, env) } satisfies ExportedHandler<Env>;
 * ```
 */
export async function handleQueueBatch(
  batch: MessageBatch<unknown>,
  env: Env,
  options: QueueOptions = {},
): Promise<void> {
  const send = options.fetch ?? fetch;
  const handle =
    batch.queue === DELIVERIES_QUEUE
      ? deliver
      : batch.queue === DELIVERIES_DEAD_LETTER_QUEUE
        ? deadLetter
        : undefined;
  await Promise.all(
    batch.messages.map(async (message) => {
      if (handle === undefined) {
        logEvent('error', 'queue_unknown', { queue: batch.queue, message_id: message.id });
        message.retry();
        return;
      }
      try {
        await handle(message, env, send);
      } catch (error) {
        logEvent('error', 'delivery_message_failed', {
          queue: batch.queue,
          message_id: message.id,
          error_message: error instanceof Error ? error.message : String(error),
        });
        message.retry({ delaySeconds: retryDelay(message.attempts, undefined) });
      }
    }),
  );
}

/** One DELIVERIES message: load, check the URL and its host, sign, POST, record, then ack or retry. */
async function deliver(message: Message<unknown>, env: Env, send: typeof fetch): Promise<void> {
  if (isConfirmationMessage(message.body)) {
    await consumeConfirmationMessage(message, message.body, env);
    return;
  }
  if (!isDeliveryMessage(message.body)) {
    // A malformed message can never succeed: retrying it would only fill the dead letters.
    logEvent('error', 'delivery_message_invalid', { message_id: message.id });
    message.ack();
    return;
  }
  const { deliveryId } = message.body;
  const loaded = loadSettings(env);
  if (!loaded.ok) {
    // Without valid settings nothing may be sent; the delivery stays `pending` and the
    // sweeper re-enqueues it once the configuration is fixed. Retrying the message instead
    // would spend its attempts and dead-letter it during a long misconfiguration.
    skip(message, deliveryId, 'configuration_error');
    return;
  }
  const delivery = await findDelivery(env.DB, deliveryId);
  if (delivery === undefined || delivery.status !== 'pending') {
    skip(message, deliveryId, delivery === undefined ? 'not_found' : delivery.status);
    return;
  }
  const [event, subscription] = await Promise.all([
    findWebhookEvent(env.DB, delivery.eventId),
    findSubscription(env.DB, delivery.subscriptionId),
  ]);
  if (event === undefined || subscription === undefined || !subscription.enabled) {
    // Settled as failed so the sweeper never re-enqueues it; an admin retry may revive it.
    await markDeliveryFailed(env.DB, deliveryId, Date.now());
    const reason = event === undefined ? 'event_gone' : 'subscription_gone_or_disabled';
    skip(message, deliveryId, reason);
    return;
  }
  const settings = loaded.settings.subscribers;
  const urlCheck = checkSubscriptionUrl(subscription.url, settings);
  if (!urlCheck.ok) {
    await failBeforeSending(message, env, deliveryId, {
      startedAt: Date.now(),
      error: `URL refused: ${urlCheck.message}`,
      retry: false,
    });
    return;
  }
  if (urlCheck.hostName !== null) {
    const startedAt = Date.now();
    const hostCheck = await checkSubscriberHost(urlCheck.hostName, {
      resolver: settings.dnsResolver,
      allowLoopback: settings.allowLocal,
      fetch: send,
    });
    if (!hostCheck.ok) {
      await failBeforeSending(message, env, deliveryId, { startedAt, ...hostCheck });
      return;
    }
  }
  const now = Date.now();
  let headers: Headers;
  try {
    headers = await standardWebhookHeaders({
      id: event.eventId,
      timestamp: Math.floor(now / 1000),
      body: event.rawBody,
      secrets: signingSecrets(subscription, now),
    });
  } catch {
    // An event id no header can carry (stored before the ingress refused such ids):
    // no attempt could ever be sent, so it fails once, recorded, instead of every retry.
    await failBeforeSending(message, env, deliveryId, {
      startedAt: now,
      error: 'The event id cannot be sent as the webhook-id header',
      retry: false,
    });
    return;
  }
  const result = await sendDelivery(urlCheck.url, headers, event.rawBody, { fetch: send });
  const settledAt = Date.now();
  const { retryAfter, ...attempt } = result;
  let outcome: AttemptOutcome;
  let delaySeconds: number | undefined;
  if (result.status !== null && result.status >= 200 && result.status < 300) {
    outcome = { ...attempt, deliveryStatus: 'delivered', nextAttemptAt: null };
  } else if (result.status === 410) {
    outcome = { ...attempt, deliveryStatus: 'failed', nextAttemptAt: null };
  } else {
    delaySeconds = retryDelay(message.attempts, parseRetryAfter(retryAfter, settledAt));
    outcome = {
      ...attempt,
      deliveryStatus: 'pending',
      nextAttemptAt: settledAt + delaySeconds * 1000,
    };
  }
  await recordDeliveryAttempt(env.DB, deliveryId, outcome, settledAt);
  if (result.status === 410) {
    // 410 Gone: the subscriber asks to stop; an admin re-enables it.
    await updateSubscription(env.DB, subscription.id, { enabled: false }, settledAt);
  }
  logEvent(delaySeconds === undefined ? 'info' : 'warn', 'delivery_attempted', {
    delivery_id: deliveryId,
    event_id: event.eventId,
    subscription_id: subscription.id,
    attempt: message.attempts,
    http_status: result.status,
    latency_ms: result.latencyMs,
    outcome: outcome.deliveryStatus,
    retry_in_sec: delaySeconds ?? null,
  });
  if (delaySeconds === undefined) message.ack();
  else message.retry({ delaySeconds });
}

/** Why no request was sent, as {@link failBeforeSending} records it. */
interface RefusedAttempt {
  /** When the checks started, epoch milliseconds. */
  readonly startedAt: number;
  readonly error: string;
  /** Retry on the schedule (a failed DNS lookup), or fail the delivery for good (a refusal). */
  readonly retry: boolean;
}

/**
 * Records an attempt that sent no request: a refused URL or host fails the delivery for
 * good (an admin retry revives it once fixed); a failed DNS lookup leaves it pending and
 * retries the message on the schedule, like a network error would.
 */
async function failBeforeSending(
  message: Message<unknown>,
  env: Env,
  deliveryId: string,
  { startedAt, error, retry }: RefusedAttempt,
): Promise<void> {
  const settledAt = Date.now();
  const delaySeconds = retry ? retryDelay(message.attempts, undefined) : undefined;
  await recordDeliveryAttempt(
    env.DB,
    deliveryId,
    {
      startedAt,
      status: null,
      latencyMs: settledAt - startedAt,
      error,
      responseExcerpt: null,
      deliveryStatus: delaySeconds === undefined ? 'failed' : 'pending',
      nextAttemptAt: delaySeconds === undefined ? null : settledAt + delaySeconds * 1000,
    },
    settledAt,
  );
  logEvent('warn', 'delivery_not_sent', {
    delivery_id: deliveryId,
    attempt: message.attempts,
    error_message: error,
    retry_in_sec: delaySeconds ?? null,
  });
  if (delaySeconds === undefined) message.ack();
  else message.retry({ delaySeconds });
}

/** One dead-lettered message: its attempts ran out, the delivery is `failed`. */
async function deadLetter(message: Message<unknown>, env: Env): Promise<void> {
  if (isConfirmationMessage(message.body)) {
    // The event keeps its `next_check_at`: the cron sweeper starts the check again.
    logEvent('warn', 'confirmation_check_dead_lettered', { event_id: message.body.eventId });
    message.ack();
    return;
  }
  if (!isDeliveryMessage(message.body)) {
    logEvent('error', 'delivery_message_invalid', { message_id: message.id });
    message.ack();
    return;
  }
  const marked = await markDeliveryFailed(env.DB, message.body.deliveryId, Date.now());
  logEvent('warn', 'delivery_dead_lettered', { delivery_id: message.body.deliveryId, marked });
  message.ack();
}

/** The current secret, then the previous one while its rotation grace period lasts. */
function signingSecrets(subscription: SubscriptionRecord, now: number): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = subscription;
  const previousValid =
    previousSecret !== null && previousSecretExpiresAt !== null && previousSecretExpiresAt > now;
  return previousValid ? [secret, previousSecret] : [secret];
}

function skip(message: Message<unknown>, deliveryId: string, reason: string): void {
  logEvent('info', 'delivery_skipped', { delivery_id: deliveryId, reason });
  message.ack();
}
