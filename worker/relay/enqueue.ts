/**
 * Sending deliveries to the `DELIVERIES` queue once their rows are written (at ingress, or
 * when a re-check confirms an event).
 */
import { logEvent } from '../http/log.ts';
import type { DeliveryMessage } from './consumer.ts';

/** Most messages per `sendBatch` call (the Queues limit). */
const SEND_BATCH_MAX = 100;

/**
 * Enqueues one `{ deliveryId }` message per delivery, after the D1 write. A failure is
 * logged, not thrown: the deliveries are stored `pending`, and the cron sweeper re-enqueues
 * deliveries stored but never enqueued (the same heals a crash between the two).
 *
 * @param queue - the `DELIVERIES` binding.
 * @param deliveryIds - the deliveries just written.
 * @param requestId - logged with a failure.
 */
export async function enqueueDeliveries(
  queue: Queue,
  deliveryIds: readonly string[],
  requestId: string,
): Promise<void> {
  try {
    for (let start = 0; start < deliveryIds.length; start += SEND_BATCH_MAX) {
      const chunk = deliveryIds.slice(start, start + SEND_BATCH_MAX);
      await queue.sendBatch(
        chunk.map((deliveryId) => ({ body: { deliveryId } satisfies DeliveryMessage })),
      );
    }
  } catch (error) {
    logEvent('error', 'delivery_enqueue_failed', {
      request_id: requestId,
      deliveries: deliveryIds.length,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}
