/**
 * The end of a delivery whose attempts ran out: marked `failed`, so the sweeper never
 * re-enqueues it (an operator's retry revives it). Reached from a subscription's outbox
 * after its last scheduled attempt failed, and from the dead-letter queue for a message the
 * consumer could not hand over in its attempts.
 */
import { markDeliveryFailed } from '../db/deliveries.ts';
import type { EventShard } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';
import { announceDeadLetter } from './operational-alerts.ts';

/**
 * Raises `delivery.dead_lettered` for a delivery whose attempts ran out (before the mark, so a
 * failure leaves it pending and a retry raises it), marks it `failed` and logs it.
 *
 * @param env - bindings (`DB`).
 * @param shard - the event shard storing the delivery.
 * @param deliveryId - `dlv_<uuid>`.
 * @returns `true` when a pending delivery was marked, `false` when it was missing or settled.
 * @throws whatever D1 throws.
 */
export async function deadLetterDelivery(
  env: Env,
  shard: EventShard,
  deliveryId: string,
): Promise<boolean> {
  const now = Date.now();
  await announceDeadLetter(env, shard, deliveryId, now);
  const marked = await markDeliveryFailed(shard.db, deliveryId, now);
  logEvent('warn', 'delivery_dead_lettered', { delivery_id: deliveryId, marked });
  return marked;
}
