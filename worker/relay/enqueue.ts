/**
 * Sending messages to the `DELIVERIES` queue in batches the Queues limit allows: the
 * deliveries written at ingress, confirmed by a re-check, re-enqueued by the sweeper or
 * retried and replayed by the admin, and the sweeper's confirmation checks.
 */
import type { DeliveryTarget } from '../db/deliveries.ts';
import { logEvent } from '../http/log.ts';
import type { DeliveryMessage } from './consumer.ts';

/** Most messages per `sendBatch` call (the Queues limit). */
const SEND_BATCH_MAX = 100;

/**
 * Sends one message per body, in `sendBatch` calls of at most 100, in order.
 *
 * @param queue - the producer (`DELIVERIES`).
 * @param bodies - the message bodies; none: nothing is sent.
 * @throws whatever the producer throws; the batches before the failing one are sent.
 */
export async function sendInBatches<Body>(
  queue: Queue<Body>,
  bodies: readonly Body[],
): Promise<void> {
  for (let start = 0; start < bodies.length; start += SEND_BATCH_MAX) {
    const chunk = bodies.slice(start, start + SEND_BATCH_MAX);
    await queue.sendBatch(chunk.map((body) => ({ body })));
  }
}

/**
 * The message of a delivery: its id and its subscription (ids only), so the consumer hands
 * it to the subscription's outbox without reading the delivery from D1, and the shard it is
 * stored in when that is not `DB`.
 *
 * @param target - the delivery and its subscription.
 */
export function deliveryMessage({
  deliveryId,
  subscriptionId,
  shard,
}: DeliveryTarget): DeliveryMessage {
  return shard === undefined
    ? { deliveryId, subscriptionId }
    : { deliveryId, subscriptionId, shard };
}

/**
 * Sends one `{ deliveryId, subscriptionId }` message per delivery to `DELIVERIES`, in
 * batches of 100.
 *
 * @param queue - the `DELIVERIES` producer.
 * @param deliveries - the deliveries to enqueue, already stored `pending`, with their
 *   subscriptions.
 * @throws whatever the producer throws (the rows stay pending and due, so the sweeper
 *   re-enqueues them).
 */
export async function enqueueDeliveryTargets(
  queue: Queue<DeliveryMessage>,
  deliveries: readonly DeliveryTarget[],
): Promise<void> {
  await sendInBatches(queue, deliveries.map(deliveryMessage));
}

/**
 * Enqueues one `{ deliveryId, subscriptionId }` message per delivery, after the D1 write. A
 * failure is logged, not thrown: the deliveries are stored `pending`, and the cron sweeper
 * re-enqueues deliveries stored but never enqueued (the same heals a crash between the two).
 *
 * @param queue - the `DELIVERIES` binding.
 * @param deliveries - the deliveries just written, with their subscriptions.
 * @param requestId - logged with a failure.
 */
export async function enqueueDeliveries(
  queue: Queue,
  deliveries: readonly DeliveryTarget[],
  requestId: string,
): Promise<void> {
  try {
    await enqueueDeliveryTargets(queue, deliveries);
  } catch (error) {
    logEvent('error', 'delivery_enqueue_failed', {
      request_id: requestId,
      deliveries: deliveries.length,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}
