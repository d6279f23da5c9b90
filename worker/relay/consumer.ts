/**
 * The relay's queue consumer: hands each `{ deliveryId }` message of the DELIVERIES queue to
 * its subscription's outbox (worker/relay/subscriber-outbox.ts), which sends it signed with
 * Standard Webhooks, records it and schedules its retries; re-checks the money event of each
 * `{ kind: 'confirm', eventId, check }` message (worker/relay/confirmation-check.ts); and
 * marks dead-lettered deliveries `failed`. A message is acked as soon as its outbox holds it,
 * so a batch never waits for a subscriber's answer, and one slow subscriber holds up only
 * its own deliveries. The outcomes per answer are listed in docs/gateway.md, "Webhook relay".
 */

import { findDelivery } from '../db/deliveries.ts';
import { shardOfMessage } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';
import { consumeConfirmationMessage, isConfirmationMessage } from './confirmation-check.ts';
import { deadLetterDelivery } from './dead-letter.ts';
import { consumeRecoveryMessage, isRecoveryMessage } from './recover.ts';
import { retryDelay } from './retry-schedule.ts';

/**
 * The deliveries queue (wrangler.toml): one message per (event, subscription).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const DELIVERIES_QUEUE = 'edgepay-deliveries';

/**
 * Its dead-letter queue: messages whose attempts ran out.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const DELIVERIES_DEAD_LETTER_QUEUE = 'edgepay-deliveries-dlq';

/**
 * The body of a deliveries message: ids only, the consumer reads the rest from D1. The
 * same queue carries re-checks of money events (`ConfirmationMessage`, told apart by its
 * `kind: 'confirm'`), so their short delays need no second queue.
 */
export interface DeliveryMessage {
  /** `dlv_<uuid>`. */
  readonly deliveryId: string;
  /**
   * The delivery's subscription, naming its outbox; absent on messages queued before they
   * carried it, whose subscription is read from D1.
   */
  readonly subscriptionId?: string;
  /**
   * The binding name of the event shard the delivery is stored in (worker/db/event-shards.ts);
   * absent: `DB` (one shard, or a message queued before messages named their shard).
   */
  readonly shard?: string;
  /**
   * Set when an operator asked for this attempt (worker/relay/operator-request.ts):
   * `retry`, `replay` or `recover`; absent on the relay's own messages, and on those queued
   * before messages carried it, whose attempts are `schedule`.
   */
  readonly trigger?: 'retry' | 'replay' | 'recover';
  /** The operator's name, when one was given. */
  readonly operator?: string;
  /** When the operator asked, epoch milliseconds (set with `trigger`). */
  readonly requestedAt?: number;
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

/**
 * The Worker's `queue` handler: by `batch.queue`, hands deliveries to their outboxes
 * (DELIVERIES) or marks them failed (its dead-letter queue), each message acked or retried on
 * its own. The deliveries of one subscription in a batch go to its outbox in one call, so an
 * outbox is asked once per batch, not once per delivery. An unexpected error retries the
 * messages it concerns on the schedule; an unknown queue retries all.
 *
 * @param batch - the batch from Cloudflare Queues.
 * @param env - bindings (`DB`, `SUBSCRIBER_OUTBOX`).
 *
 * @example
 * ```ts
 * export default { queue: (batch, env) => handleQueueBatch(batch, env) } satisfies ExportedHandler<Env>;
 * ```
 */
export async function handleQueueBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const queue = batch.queue;
  if (queue === DELIVERIES_QUEUE) {
    const outboxes = new Map<string, Message<unknown>[]>();
    await eachMessage(queue, batch.messages, async (message) => {
      const subscriptionId = await deliver(message, env);
      if (subscriptionId === undefined) return;
      const held = outboxes.get(subscriptionId);
      if (held === undefined) outboxes.set(subscriptionId, [message]);
      else held.push(message);
    });
    await Promise.all(
      [...outboxes].map(([subscriptionId, messages]) =>
        handOver(queue, env, subscriptionId, messages),
      ),
    );
    return;
  }
  if (queue === DELIVERIES_DEAD_LETTER_QUEUE) {
    await eachMessage(queue, batch.messages, (message) => deadLetter(message, env));
    return;
  }
  for (const message of batch.messages) {
    logEvent('error', 'queue_unknown', { queue, message_id: message.id });
    message.retry();
  }
}

/** Runs `handle` on each message concurrently; one that throws is logged and retried. */
async function eachMessage(
  queue: string,
  messages: readonly Message<unknown>[],
  handle: (message: Message<unknown>) => Promise<void>,
): Promise<void> {
  await Promise.all(
    messages.map(async (message) => {
      try {
        await handle(message);
      } catch (error) {
        retryFailed(queue, [message], error);
      }
    }),
  );
}

/** Logs why messages could not be handled and retries each on the schedule. */
function retryFailed(queue: string, messages: readonly Message<unknown>[], error: unknown): void {
  for (const message of messages) {
    logEvent('error', 'delivery_message_failed', {
      queue,
      message_id: message.id,
      error_message: error instanceof Error ? error.message : String(error),
    });
    message.retry({ delaySeconds: retryDelay(message.attempts, undefined) });
  }
}

/**
 * One DELIVERIES message: a confirmation check goes to its own consumer, a recovery page to
 * its step; a delivery's subscription is returned, for its outbox to take it over.
 *
 * @returns the subscription whose outbox takes the delivery; `undefined` once the message is
 *   settled here.
 */
async function deliver(message: Message<unknown>, env: Env): Promise<string | undefined> {
  if (isConfirmationMessage(message.body)) {
    await consumeConfirmationMessage(message, message.body, env);
    return undefined;
  }
  if (isRecoveryMessage(message.body)) {
    // A page of a bulk recovery job (POST /admin/deliveries/recover).
    await consumeRecoveryMessage(message, message.body, env);
    return undefined;
  }
  if (!isDeliveryMessage(message.body)) {
    // A malformed message can never succeed: retrying it would only fill the dead letters.
    logEvent('error', 'delivery_message_invalid', { message_id: message.id });
    message.ack();
    return undefined;
  }
  const { deliveryId } = message.body;
  const subscriptionId =
    message.body.subscriptionId ??
    (await findDelivery(shardOfMessage(env, message.body).db, deliveryId))?.subscriptionId;
  if (subscriptionId === undefined) {
    logEvent('info', 'delivery_skipped', { delivery_id: deliveryId, reason: 'not_found' });
    message.ack();
  }
  return subscriptionId;
}

/** Hands a subscription's deliveries to its outbox in one call, and acks them once it holds them. */
async function handOver(
  queue: string,
  env: Env,
  subscriptionId: string,
  messages: readonly Message<unknown>[],
): Promise<void> {
  try {
    await env.SUBSCRIBER_OUTBOX.getByName(subscriptionId).accept(
      messages.map((message) => ({
        subscriptionId,
        body: { ...(message.body as DeliveryMessage) },
        attempts: message.attempts,
        sentAt: message.timestamp.getTime(),
      })),
    );
  } catch (error) {
    retryFailed(queue, messages, error);
    return;
  }
  for (const message of messages) message.ack();
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
  await deadLetterDelivery(env, shardOfMessage(env, message.body), message.body.deliveryId);
  message.ack();
}
