/**
 * Operational events raised where they happen, through the real Worker: a dead-lettered
 * delivery (the dead-letter queue's consumer) and a money event that ends unconfirmed (the
 * ingress and the re-check, against the confirm sandbox over HTTP). Each is delivered signed
 * to the subscriptions that list its type, never to the one it is about nor to a subscription
 * to every type.
 */
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery, listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { emitOperationalEvent } from '../../../worker/relay/operational-events.ts';
import { useCapturedLogs } from '../helpers.ts';
import { control, ingest, runMessages, sandboxClient } from './confirmation-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  type ReceiverSubscription,
  receivedUnder,
  recordingQueue,
  runQueue,
  storeEvent,
} from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** The delivery ids among queue messages. */
const deliveryIdsIn = (messages: readonly MessageSendRequest[]): string[] =>
  messages.flatMap((message) => {
    const { deliveryId } = message.body as { deliveryId?: unknown };
    return typeof deliveryId === 'string' ? [deliveryId] : [];
  });

/** Delivers `deliveryIds` with the real consumer; returns the payload `listener` got, verified. */
async function deliveredTo(
  listener: ReceiverSubscription,
  deliveryIds: readonly string[],
): Promise<Record<string, unknown>> {
  await runQueue(
    DELIVERIES_QUEUE,
    deliveryIds.map((deliveryId) => ({ body: { deliveryId } })),
  );
  const received = await receivedUnder(listener.key);
  expect(received).toHaveLength(1);
  const [request] = received;
  if (request === undefined) throw new Error('nothing delivered');
  const webhook = new Webhook(listener.subscription.secret);
  return webhook.verify(request.body, request.headers) as Record<string, unknown>;
}

/** Runs the dead-letter queue's consumer on one delivery; returns what it enqueued. */
async function deadLetter(deliveryId: string): Promise<string[]> {
  const recorder = recordingQueue();
  await runQueue(DELIVERIES_DEAD_LETTER_QUEUE, [{ body: { deliveryId }, attempts: 8 }], {
    DELIVERIES: recorder.queue,
  });
  return deliveryIdsIn(recorder.batches.flat());
}

describe('operational events where they happen', () => {
  describe('delivery.dead_lettered', () => {
    it('should be raised by the dead-letter consumer and delivered to listeners only', async () => {
      const type = `test_${crypto.randomUUID()}`;
      // The subject lists the operational type too: it must still not get its own alert.
      const subject = await createReceiverSubscription({
        eventTypes: [type, 'delivery.dead_lettered'],
        query: { status: '500' },
      });
      const listener = await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      const everything = await createReceiverSubscription({ eventTypes: null });
      const stored = await storeEvent(type);
      const failing = (await listEventDeliveries(env.DB, stored.eventId)).find(
        (d) => d.subscriptionId === subject.subscription.id,
      );
      if (failing === undefined) throw new Error('no delivery to the subject');
      // An attempt fails (500); then the message lands in the dead-letter queue.
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: failing.id } }]);

      const sent = await deadLetter(failing.id);
      expect((await findDelivery(env.DB, failing.id))?.status).toBe('failed');
      const eventId = `delivery.dead_lettered:${failing.id}:1`;
      const alert = await findWebhookEvent(env.DB, eventId);
      expect(alert?.eventType).toBe('delivery.dead_lettered');
      const deliveries = await listEventDeliveries(env.DB, eventId);
      expect(deliveries.map((d) => d.subscriptionId)).toEqual([listener.subscription.id]);
      expect(sent).toEqual(deliveries.map((d) => d.id));

      const payload = await deliveredTo(listener, sent);
      expect(payload).toMatchObject({
        event_type: 'delivery.dead_lettered',
        event_id: eventId,
        data: {
          delivery_id: failing.id,
          event_id: stored.eventId,
          event_type: type,
          subscription_id: subject.subscription.id,
          attempts: 1,
          last_status: 500,
        },
      });
      // The subject got only its own failing attempt, never the alert about it.
      const toSubject = await receivedUnder(subject.key);
      expect(toSubject.map((r) => r.headers['webhook-id'])).toEqual([stored.eventId]);
      expect(await receivedUnder(everything.key)).toEqual([]);
    });

    it('should not raise it again when the dead letter comes twice', async () => {
      const type = `test_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [type] });
      await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      const [deliveryId = ''] = (await storeEvent(type)).deliveryIds;
      expect(await deadLetter(deliveryId)).toHaveLength(1);
      expect(await deadLetter(deliveryId)).toEqual([]);
      expect(
        await listEventDeliveries(env.DB, `delivery.dead_lettered:${deliveryId}:0`),
      ).toHaveLength(1);
    });

    it('should raise nothing for a dead-lettered delivery of an operational event', async () => {
      const listener = await createReceiverSubscription({
        eventTypes: ['delivery.dead_lettered', 'relay.backlog'],
      });
      const backlog = await emitOperationalEvent(
        { ...env, DELIVERIES: recordingQueue().queue },
        {
          type: 'relay.backlog',
          now: Date.parse('2020-01-01T00:30:00Z'),
          data: {
            oldest_delivery_id: 'dlv_x',
            oldest_event_id: 'evt_x',
            oldest_subscription_id: 'sub_x',
            oldest_due_at: '2020-01-01T00:00:00.000Z',
            age_seconds: 1800,
            threshold_seconds: 600,
            due_deliveries: 1,
          },
        },
      );
      const [deliveryId = ''] = backlog.deliveryIds;
      expect(await deadLetter(deliveryId)).toEqual([]);
      expect((await findDelivery(env.DB, deliveryId))?.status).toBe('failed');
      expect(await findWebhookEvent(env.DB, `delivery.dead_lettered:${deliveryId}:0`)).toBe(
        undefined,
      );
      expect(await receivedUnder(listener.key)).toEqual([]);
    });
  });

  describe('event.unconfirmed', () => {
    async function payment(): Promise<string> {
      const reference = `oa_pay_${crypto.randomUUID()}`;
      await sandboxClient().payments.initialize({
        email: 'buyer@example.com',
        amount: '2500.00',
        currency: 'NGN',
        reference,
      });
      return reference;
    }

    const chargeFor = (reference: string) => ({
      event_type: 'charge_success',
      event_id: `evt_oa_${crypto.randomUUID()}`,
      timestamp: new Date().toISOString(),
      data: { reference, amount: 2500, currency: 'NGN' },
    });

    it('should be raised when a re-check finds the record failed', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const everything = await createReceiverSubscription({ eventTypes: null });
      const listener = await createReceiverSubscription({ eventTypes: ['event.unconfirmed'] });
      const reference = await payment();
      const event = chargeFor(reference);
      const { sent } = await ingest(JSON.stringify(event));
      // Still processing at the sandbox: held, nothing raised yet.
      expect(deliveryIdsIn(sent)).toEqual([]);
      expect(await findWebhookEvent(env.DB, `event.unconfirmed:${event.event_id}`)).toBe(undefined);
      await control(`payments/${reference}/complete`, { outcome: 'failed' });

      const raised = deliveryIdsIn(await runMessages(sent));
      expect(raised).toHaveLength(1);
      const payload = await deliveredTo(listener, raised);
      expect(payload).toMatchObject({
        event_type: 'event.unconfirmed',
        event_id: `event.unconfirmed:${event.event_id}`,
        data: {
          event_id: event.event_id,
          event_type: 'charge_success',
          reference,
          reason: 'status failed, expected success',
          checks: 2,
        },
      });
      expect(await receivedUnder(everything.key)).toEqual([]);
    });

    it('should be raised at ingress when the payment service contradicts the event at once', async () => {
      const listener = await createReceiverSubscription({ eventTypes: ['event.unconfirmed'] });
      const reference = await payment();
      await control(`payments/${reference}/complete`, { outcome: 'failed' });
      const event = chargeFor(reference);
      const { res, sent } = await ingest(JSON.stringify(event));
      expect(res.status).toBe(200);
      expect((await findWebhookEvent(env.DB, event.event_id))?.status).toBe('unconfirmed');
      const payload = await deliveredTo(listener, deliveryIdsIn(sent));
      expect(payload).toMatchObject({
        event_type: 'event.unconfirmed',
        data: { event_id: event.event_id, checks: 1, reference },
      });
    });
  });
});
