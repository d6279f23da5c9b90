/**
 * Ordered delivery (`ordered: true`): the events of one reference reach the subscriber in
 * the provider's timestamp order, never the later one first, and other references are not
 * held up. Real consumer, Durable Objects, D1 and the recording receiver over HTTP.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { fanOutDeliveriesStatement, findDelivery } from '../../../worker/db/deliveries.ts';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import { envelope } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
} from './delivery-helpers.ts';
import { heldDeliveries, outboxOf } from './outbox-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** Stores an event of `eventType` for `reference` at the provider's `timestamp`, with its fan-out. */
async function storeAt(
  eventType: string,
  reference: string,
  timestamp: string,
  status: 'received' | 'awaiting_confirmation' = 'received',
) {
  const body = envelope({ event_type: eventType, timestamp, data: { reference } });
  const event = {
    eventId: body.event_id as string,
    eventType,
    receivedAt: Date.now(),
    reference,
    rawBody: JSON.stringify(body),
  };
  const [, fanOut] = await env.DB.batch<{ id: string }>([
    await insertWebhookEventStatement(env.DB, event, status),
    fanOutDeliveriesStatement(env.DB, event),
  ]);
  return { eventId: event.eventId, deliveryId: fanOut?.results[0]?.id ?? '' };
}

/** A receiver subscription to `eventType`, `ordered` as given. */
async function subscription(eventType: string, ordered: boolean) {
  const created = await createReceiverSubscription({
    eventTypes: [eventType],
    query: { status: '204' },
  });
  await env.DB.prepare('UPDATE subscriptions SET ordered = ?1 WHERE id = ?2')
    .bind(ordered ? 1 : 0, created.subscription.id)
    .run();
  return created;
}

const deliver = (deliveryIds: readonly string[]) =>
  runQueue(
    DELIVERIES_QUEUE,
    deliveryIds.map((deliveryId) => ({ body: { deliveryId } })),
  );

const receivedIds = async (key: string) =>
  (await receivedUnder(key)).map((request) => request.headers['webhook-id']);

describe('ordered delivery', () => {
  it('should hold a later event of a reference until the earlier one is delivered, and not other references', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await subscription(type, true);
    const reference = `ref_${crypto.randomUUID()}`;
    const earlier = await storeAt(type, reference, '2030-01-01T00:00:00.000Z');
    const later = await storeAt(type, reference, '2030-01-01T00:00:05.000Z');
    const other = await storeAt(type, `ref_${crypto.randomUUID()}`, '2030-01-01T00:00:09.000Z');

    // The later event's message comes first (the earlier one's is slower, or was lost).
    await deliver([later.deliveryId, other.deliveryId]);
    expect(await receivedIds(sub.key)).toEqual([other.eventId]);
    expect(await findDelivery(env.DB, later.deliveryId)).toMatchObject({
      status: 'pending',
      attempts: 0,
    });
    const [held] = await heldDeliveries(outboxOf(sub.subscription.id));
    expect(held).toMatchObject({ delivery_id: later.deliveryId, sending_since: null });

    // The earlier one arrives: it goes, and the later one is woken right after it.
    await deliver([earlier.deliveryId]);
    expect(await receivedIds(sub.key)).toEqual([other.eventId, earlier.eventId, later.eventId]);
    expect(await heldDeliveries(outboxOf(sub.subscription.id))).toEqual([]);
  });

  it('should hold a later event while an earlier one of its reference awaits confirmation', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await subscription(type, true);
    const reference = `ref_${crypto.randomUUID()}`;
    const earlier = await storeAt(
      type,
      reference,
      '2030-01-01T00:00:00.000Z',
      'awaiting_confirmation',
    );
    // Not confirmed yet: the ingress writes no delivery for it.
    await env.DB.prepare('DELETE FROM deliveries WHERE event_id = ?1').bind(earlier.eventId).run();
    const later = await storeAt(type, reference, '2030-01-01T00:00:05.000Z');
    await deliver([later.deliveryId]);
    expect(await receivedIds(sub.key)).toEqual([]);
    expect(await findDelivery(env.DB, later.deliveryId)).toMatchObject({ attempts: 0 });
  });

  it('should deliver in arrival order when the subscription is not ordered', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await subscription(type, false);
    const reference = `ref_${crypto.randomUUID()}`;
    await storeAt(type, reference, '2030-01-01T00:00:00.000Z');
    const later = await storeAt(type, reference, '2030-01-01T00:00:05.000Z');
    await deliver([later.deliveryId]);
    expect(await receivedIds(sub.key)).toEqual([later.eventId]);
  });
});
