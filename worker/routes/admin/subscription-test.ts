/**
 * `POST /admin/subscriptions/:id/test`: an operator's test event for one subscription, so a
 * new receiver (or one just fixed) can be seen taking a signed delivery without waiting for
 * a payment. The event is one of the relay's own (`subscription.test`), stored and delivered
 * through the same path as any other, so its page in the console shows the attempt.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { findSubscription } from '../../db/subscriptions.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { subscriberHost } from '../../relay/operational-event-schemas.ts';
import { emitOperationalEvent } from '../../relay/operational-events.ts';
import { OperatorNameSchema, operatorOf } from './operator.ts';
import { disabledError } from './subscription-guard.ts';

/** The optional body, strict: `operator` (who sends the test, written into its data). */
export const SubscriptionTestSchema = v.strictObject({ operator: v.optional(OperatorNameSchema) });

/** The answer's `data`: the test event and its one delivery. */
interface SubscriptionTestView {
  event_id: string;
  delivery_id: string;
}

/**
 * Stores a `subscription.test` event and delivers it to this subscription only, whatever its
 * `event_types` (no other subscription gets it), signed and retried like any delivery.
 *
 * @param body - the validated body; `undefined` for a bare POST.
 * @returns 202 `{ status: 'success', data: { event_id, delivery_id } }`.
 * @throws {HttpError} 404 `not_found` (no such subscription); 409 `subscription_disabled`
 *   when it is disabled (nothing is stored: the relay would skip the delivery unsent).
 */
export async function sendTestEvent(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof SubscriptionTestSchema> | undefined,
): Promise<Response> {
  const id = request.params.id ?? '';
  const operator = operatorOf(request, body?.operator);
  const subscription = await findSubscription(env.DB, id);
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (subscription === undefined) {
    throw new HttpError(404, 'not_found', `No subscription ${JSON.stringify(id)}`);
  }
  const target = {
    id,
    enabled: subscription.enabled,
    reason: subscription.health.reason,
    disabledAt: subscription.health.disabledAt,
  };
  if (!subscription.enabled) throw disabledError(target);
  const now = Date.now();
  const emitted = await emitOperationalEvent(env, {
    type: 'subscription.test',
    data: {
      subscription_id: id,
      host: subscriberHost(subscription.url),
      operator,
      sent_at: new Date(now).toISOString(),
    },
    recipientSubscriptionId: id,
    now,
  });
  const deliveryId = emitted.deliveryIds[0];
  // Disabled (or deleted) between the read and the write: the fan-out wrote no delivery.
  if (deliveryId === undefined) throw disabledError({ ...target, enabled: false });
  logEvent('info', 'subscription_test_sent', {
    request_id: contextOf(request).requestId,
    subscription_id: id,
    event_id: emitted.eventId,
    operator,
  });
  const data: SubscriptionTestView = { event_id: emitted.eventId, delivery_id: deliveryId };
  return jsonResponse({ status: 'success', data }, { status: 202 });
}
