/**
 * The fan-out at ingress: `POST /webhooks` through the real Worker and
 * D1 writes one delivery per matching enabled subscription in the event's batch, none
 * for a duplicate, and enqueues `{ deliveryId, subscriptionId }` messages (recorded by a
 * stand-in producer).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { fetchGateway, UUID, useCapturedLogs } from '../helpers.ts';
import { envelope, rowCount, webhookRequest } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
} from './delivery-helpers.ts';

const logs = useCapturedLogs();

afterEach(disableTestSubscriptions);

/** Posts `event` (signed) with a recording DELIVERIES producer. */
async function ingest(event: Record<string, unknown>, queue = recordingQueue()) {
  const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), {
    DELIVERIES: queue.queue,
  });
  return { res, queue };
}

/**
 * The event's deliveries to `subscriptions` (the file's D1 outlives each test: earlier
 * tests' subscriptions are disabled after them, this keeps assertions to the test's own).
 */
async function deliveriesTo(
  eventId: unknown,
  ...subscriptions: { subscription: { id: string } }[]
) {
  const ids = new Set(subscriptions.map((s) => s.subscription.id));
  const all = await listEventDeliveries(env.DB, String(eventId));
  return all.filter((delivery) => ids.has(delivery.subscriptionId));
}

/** Subscriptions: all events, charge_success only, another type only, and a disabled one. */
async function fourSubscriptions() {
  const all = await createReceiverSubscription();
  const charges = await createReceiverSubscription({
    eventTypes: ['refund_processed', 'charge_success'],
  });
  const other = await createReceiverSubscription({ eventTypes: ['transfer_success'] });
  const disabled = await createReceiverSubscription({ enabled: false });
  return { all, charges, other, disabled };
}

describe('webhooks fan-out', () => {
  describe('POST /webhooks', () => {
    it('should write one pending delivery per matching enabled subscription', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'charge_success' });
      const { res } = await ingest(event);
      expect(res.status).toBe(200);
      const deliveries = await deliveriesTo(
        event.event_id,
        subs.all,
        subs.charges,
        subs.other,
        subs.disabled,
      );
      expect(deliveries.map((d) => d.subscriptionId).sort()).toEqual(
        [subs.all.subscription.id, subs.charges.subscription.id].sort(),
      );
      for (const delivery of deliveries) {
        expect(delivery.id).toMatch(/^dlv_/);
        expect(delivery.id.slice(4)).toMatch(UUID);
        expect(delivery).toMatchObject({ status: 'pending', attempts: 0, lastStatus: null });
        expect(delivery.nextAttemptAt).toBe(delivery.createdAt);
      }
    });

    it('should deliver an event of an unfiltered type only to the NULL-filter subscription', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'mandate_created' });
      await ingest(event);
      const deliveries = await deliveriesTo(
        event.event_id,
        subs.all,
        subs.charges,
        subs.other,
        subs.disabled,
      );
      expect(deliveries.map((d) => d.subscriptionId)).toEqual([subs.all.subscription.id]);
    });

    it('should enqueue one message per delivery carrying the delivery and subscription ids only, in one sendBatch', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'charge_success' });
      const { queue } = await ingest(event);
      expect(
        await deliveriesTo(event.event_id, subs.all, subs.charges, subs.other, subs.disabled),
      ).toHaveLength(2);
      const deliveries = await listEventDeliveries(env.DB, String(event.event_id));
      expect(queue.batches).toHaveLength(1);
      const bodies = queue.batches[0]?.map((message) => message.body) ?? [];
      expect(bodies).toHaveLength(deliveries.length);
      for (const body of bodies) {
        expect(Object.keys(body as object)).toEqual(['deliveryId', 'subscriptionId']);
      }
      const byId = (a: { deliveryId: string }, b: { deliveryId: string }) =>
        a.deliveryId < b.deliveryId ? -1 : 1;
      expect([...(bodies as { deliveryId: string }[])].sort(byId)).toEqual(
        deliveries.map((d) => ({ deliveryId: d.id, subscriptionId: d.subscriptionId })).sort(byId),
      );
    });

    it('should write and enqueue nothing for a duplicate, even for a subscription created since', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'charge_success' });
      await ingest(event);
      const before = await listEventDeliveries(env.DB, String(event.event_id));
      const late = await createReceiverSubscription();
      const { res, queue } = await ingest(event);
      expect(await res.json()).toMatchObject({ duplicate: true });
      expect(queue.batches).toEqual([]);
      expect(await listEventDeliveries(env.DB, String(event.event_id))).toEqual(before);
      expect(
        await deliveriesTo(event.event_id, subs.all, subs.charges, subs.other, subs.disabled, late),
      ).toHaveLength(2);
    });

    it('should yield exactly one delivery and one message per subscription under a storm of 10', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'charge_success' });
      const queue = recordingQueue();
      const responses = await Promise.all(Array.from({ length: 10 }, () => ingest(event, queue)));
      expect(responses.map(({ res }) => res.status)).toEqual(Array(10).fill(200));
      const deliveries = await listEventDeliveries(env.DB, String(event.event_id));
      const own = await deliveriesTo(
        event.event_id,
        subs.all,
        subs.charges,
        subs.other,
        subs.disabled,
      );
      expect(own.map((d) => d.subscriptionId).sort()).toEqual(
        [subs.all.subscription.id, subs.charges.subscription.id].sort(),
      );
      const sent = queue.batches.flat().map((m) => (m.body as { deliveryId: string }).deliveryId);
      expect(sent.sort()).toEqual(deliveries.map((d) => d.id).sort());
    });

    it('should write nothing for a non-matching subscription and never send an empty batch', async () => {
      const other = await createReceiverSubscription({ eventTypes: ['transfer_success'] });
      const event = envelope({ event_type: `unmatched_${crypto.randomUUID()}` });
      const { res, queue } = await ingest(event);
      expect(await res.json()).toMatchObject({ duplicate: false });
      expect(await deliveriesTo(event.event_id, other)).toEqual([]);
      expect(await listEventDeliveries(env.DB, String(event.event_id))).toEqual([]);
      expect(queue.batches).toEqual([]);
    });

    it('should still answer 200 and keep the rows when the enqueue fails, logging it', async () => {
      const subs = await fourSubscriptions();
      const event = envelope({ event_type: 'charge_success' });
      const { res } = await ingest(event, recordingQueue(new Error('queue unavailable')));
      expect(res.status).toBe(200);
      expect(await rowCount(String(event.event_id))).toBe(1);
      expect(
        await deliveriesTo(event.event_id, subs.all, subs.charges, subs.other, subs.disabled),
      ).toHaveLength(2);
      const deliveries = await listEventDeliveries(env.DB, String(event.event_id));
      expect(logs.lines().find((line) => line.event === 'delivery_enqueue_failed')).toMatchObject({
        level: 'error',
        deliveries: deliveries.length,
        error_message: 'queue unavailable',
      });
    });
  });
});
