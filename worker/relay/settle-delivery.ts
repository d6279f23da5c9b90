/**
 * The last step of a delivery attempt: record what happened in D1, log it, and ack the
 * message or retry it on the schedule. The outcomes per answer are listed in
 * docs/gateway.md, "Webhook relay".
 */
import { parseRetryAfter } from '../../lib/shared.ts';
import { markDeliveryFailed } from '../db/deliveries.ts';
import { type AttemptOutcome, deliveryAttemptStatements } from '../db/delivery-attempts.ts';
import { type EventShard, shardOfMessage } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';
import { operatorRequestOf } from './operator-request.ts';
import type { OutboxState } from './outbox-subscription.ts';
import type { RefusedDelivery, SkippedDelivery } from './prepare-delivery.ts';
import { retryDelay } from './retry-schedule.ts';
import type { SentDelivery } from './send-delivery.ts';
import { recordAttemptWithHealth } from './subscriber-health.ts';

/** What a delivery attempt came to, before it is recorded. */
export type DeliveryAttemptResult = SkippedDelivery | RefusedDelivery | SentDelivery;

/**
 * Records a delivery attempt's result, logs it, and acks or retries its message:
 * - skipped: the delivery is marked `failed` when asked, then the message acked;
 * - refused: an attempt without a status is recorded; a refusal fails the delivery for
 *   good (an admin retry revives it once fixed), a failed DNS lookup leaves it pending and
 *   retries the message on the schedule, like a network error would;
 * - sent: a 2xx delivers, a 410 fails the delivery and disables its subscription (the
 *   subscriber asks to stop; an admin re-enables it), anything else retries on the
 *   schedule, honouring `Retry-After`.
 *
 * @param message - the DELIVERIES message (its `attempts` picks the retry delay; its `shard`,
 *   where the delivery is stored).
 * @param env - bindings (`DB`, the event shards).
 * @param deliveryId - the delivery the message names.
 * @param result - what the prepare and send steps came to.
 * @param outbox - the outbox's copy of its subscription and its attempt counts.
 * @throws whatever D1 throws (the caller retries the message).
 */
export async function settleDelivery(
  message: Message<unknown>,
  env: Env,
  deliveryId: string,
  result: DeliveryAttemptResult,
  outbox: OutboxState,
): Promise<void> {
  const shard = shardOfMessage(env, message.body);
  if (result.kind === 'skipped') {
    if (result.markFailed) await markDeliveryFailed(shard.db, deliveryId, Date.now());
    logEvent('info', 'delivery_skipped', { delivery_id: deliveryId, reason: result.reason });
    message.ack();
    return;
  }
  const delaySeconds =
    result.kind === 'refused'
      ? await settleRefused(message, env, { deliveryId, shard, outbox }, result)
      : await settleSent(message, env, { deliveryId, shard, outbox }, result);
  if (delaySeconds === undefined) message.ack();
  else message.retry({ delaySeconds });
}

/** A delivery, the shard that stores it, and what its outbox knows. */
interface StoredDelivery {
  readonly deliveryId: string;
  readonly shard: EventShard;
  readonly outbox: OutboxState;
}

// The subscription a message names, when it names one.
function subscriptionOf(body: unknown): string | undefined {
  const id = (body as { subscriptionId?: unknown }).subscriptionId;
  return typeof id === 'string' ? id : undefined;
}

/** Records and logs an attempt that sent no request; returns the retry delay, if any. */
async function settleRefused(
  message: Message<unknown>,
  env: Env,
  { deliveryId, shard, outbox }: StoredDelivery,
  { startedAt, error, retry }: RefusedDelivery,
): Promise<number | undefined> {
  const settledAt = Date.now();
  const delaySeconds = retry ? retryDelay(message.attempts, undefined) : undefined;
  const record = await deliveryAttemptStatements(
    shard.db,
    deliveryId,
    {
      startedAt,
      status: null,
      latencyMs: settledAt - startedAt,
      error,
      responseExcerpt: null,
      request: operatorRequestOf(message.body),
      deliveryStatus: delaySeconds === undefined ? 'failed' : 'pending',
      nextAttemptAt: delaySeconds === undefined ? null : settledAt + delaySeconds * 1000,
    },
    settledAt,
  );
  const delivery = { deliveryId, shard, subscriptionId: subscriptionOf(message.body) };
  const result = { status: null, error, at: settledAt };
  await recordAttemptWithHealth(env, delivery, result, record, outbox);
  logEvent('warn', 'delivery_not_sent', {
    delivery_id: deliveryId,
    attempt: message.attempts,
    error_message: error,
    retry_in_sec: delaySeconds ?? null,
  });
  return delaySeconds;
}

/** Records and logs a sent attempt; returns the retry delay, if any. */
async function settleSent(
  message: Message<unknown>,
  env: Env,
  { deliveryId, shard, outbox }: StoredDelivery,
  { eventId, subscriptionId, sendResult: result, settledAt }: SentDelivery,
): Promise<number | undefined> {
  const { retryAfter, ...sent } = result;
  // The operator's request the message carries, if any, goes with the attempt's record.
  const attempt = { ...sent, request: operatorRequestOf(message.body) };
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
  // The attempt's record, then its count for the subscriber's health; a 410 Gone (the
  // subscriber asks to stop) or failures for the whole disable span disable the subscription.
  const record = await deliveryAttemptStatements(shard.db, deliveryId, outcome, settledAt);
  const delivery = { deliveryId, shard, subscriptionId };
  await recordAttemptWithHealth(env, delivery, { ...result, at: settledAt }, record, outbox);
  logEvent(delaySeconds === undefined ? 'info' : 'warn', 'delivery_attempted', {
    delivery_id: deliveryId,
    event_id: eventId,
    subscription_id: subscriptionId,
    attempt: message.attempts,
    http_status: result.status,
    latency_ms: result.latencyMs,
    outcome: outcome.deliveryStatus,
    retry_in_sec: delaySeconds ?? null,
  });
  return delaySeconds;
}
