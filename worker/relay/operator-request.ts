/**
 * The operator's request that a delivery message may carry (a retry, a replay, a bulk
 * recovery): sent with the message by the admin routes and the recovery job, read back by
 * the consumer so the attempt it causes is recorded with its trigger and operator.
 */

import type { DeliveryTarget } from '../db/deliveries.ts';
import {
  ATTEMPT_TRIGGERS,
  type AttemptTrigger,
  type OperatorRequest,
} from '../db/delivery-attempts.ts';
import type { DeliveryMessage } from './consumer.ts';
import { deliveryMessage, sendInBatches } from './enqueue.ts';

/** The operator's name as stored and shown: 1 to 100 printable ASCII characters. */
export const OPERATOR_NAME = /^[\x20-\x7e]{1,100}$/;

/**
 * The operator's request a message body carries, or `null`: none (the relay's own
 * messages, and those queued before messages carried one), or a malformed one (the relay
 * writes every message, so such a body is treated as its own schedule rather than refused).
 *
 * @param body - the DELIVERIES message body.
 * @returns the request: its trigger (`retry`, `replay`, `recover`), operator and time.
 */
export function operatorRequestOf(body: unknown): OperatorRequest | null {
  if (typeof body !== 'object' || body === null) return null;
  const { trigger, operator, requestedAt } = body as Partial<Record<string, unknown>>;
  if (!isOperatorTrigger(trigger) || typeof requestedAt !== 'number') return null;
  const name = typeof operator === 'string' && OPERATOR_NAME.test(operator) ? operator : null;
  return { trigger, operator: name, requestedAt };
}

/**
 * Sends one message per delivery to `DELIVERIES`, each naming its subscription and carrying
 * the operator's request, in batches of 100.
 *
 * @param queue - the `DELIVERIES` producer.
 * @param deliveries - the deliveries to enqueue, already reset to `pending`, with their
 *   subscriptions.
 * @param request - what the operator asked for, who, and when (epoch ms).
 * @throws whatever the producer throws.
 */
export async function enqueueRequestedDeliveries(
  queue: Queue<DeliveryMessage>,
  deliveries: readonly DeliveryTarget[],
  request: OperatorRequest,
): Promise<void> {
  const { trigger, operator, requestedAt } = request;
  await sendInBatches(
    queue,
    deliveries.map((delivery) => ({
      ...deliveryMessage(delivery),
      trigger,
      requestedAt,
      ...(operator === null ? {} : { operator }),
    })),
  );
}

function isOperatorTrigger(value: unknown): value is OperatorRequest['trigger'] {
  return value !== 'schedule' && ATTEMPT_TRIGGERS.includes(value as AttemptTrigger);
}
