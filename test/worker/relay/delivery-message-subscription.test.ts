/**
 * Every `DELIVERIES` message of a delivery names its subscription (`subscriptionId`), so the
 * consumer hands it to that subscription's outbox without reading the delivery from D1:
 * the messages each producer sends (ingress fan-out, a confirmation, the sweeper, an
 * operator's retry, replay, bulk recovery and re-enable) through the real Worker and D1 with
 * a recording producer, and the consumer's D1 statements counted through a recording wrapper
 * of the `DB` binding. A message queued before messages carried it still reaches its outbox.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import worker from '../../../worker/index.ts';
import { applyCheck } from '../../../worker/relay/confirmation-check.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { SWEEP_GRACE_MS, sweepRelay } from '../../../worker/relay/sweeper.ts';
import { fetchGateway, recordingDb, useCapturedLogs } from '../helpers.ts';
import { adminRequest } from '../routes/admin/admin-helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
  runQueue,
  storeDelivery,
  storeEvent,
} from './delivery-helpers.ts';
import { prepareOutboxes, settleOutboxes } from './outbox-helpers.ts';
import { seedDeliveries, startRecovery } from './recovery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const HOUR_MS = 3_600_000;

/** The delivery message bodies a recording producer was sent. */
function deliveryBodies(batches: MessageSendRequest[][]): Record<string, unknown>[] {
  return batches
    .flat()
    .map((message) => message.body as Record<string, unknown>)
    .filter((body) => typeof body.deliveryId === 'string');
}

describe('delivery messages', () => {
  describe('subscriptionId', () => {
    it('should be named by the ingress fan-out', async () => {
      const eventType = `named_${crypto.randomUUID()}`;
      const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
      const { queue, batches } = recordingQueue();
      const body = JSON.stringify(envelope({ event_type: eventType }));

      const res = await fetchGateway(await webhookRequest(body), { DELIVERIES: queue });

      expect(res.status).toBe(200);
      expect(deliveryBodies(batches)).toEqual([
        { deliveryId: expect.stringMatching(/^dlv_/), subscriptionId: subscription.id },
      ]);
    });

    it('should be named by the fan-out of a confirmed money event', async () => {
      const eventType = `named_${crypto.randomUUID()}`;
      const held = await storeEvent(eventType, { status: 'awaiting_confirmation' });
      const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
      const { queue, batches } = recordingQueue();

      const applied = await applyCheck(
        { ...env, DELIVERIES: queue },
        { eventId: held.eventId, eventType, reference: null },
        0,
        { status: 'confirmed', reason: 'confirmed' },
        Date.now(),
      );

      expect(applied.deliveryIds).toHaveLength(1);
      expect(deliveryBodies(batches)).toEqual([
        { deliveryId: applied.deliveryIds[0], subscriptionId: subscription.id },
      ]);
    });

    it('should be named by the sweeper', async () => {
      const stored = await storeDelivery();
      const { queue, batches } = recordingQueue();

      await sweepRelay({ ...env, DELIVERIES: queue }, Date.now() + SWEEP_GRACE_MS + 1000, 30, 0);

      const sent = deliveryBodies(batches);
      expect(sent).toContainEqual({
        deliveryId: stored.deliveryId,
        subscriptionId: stored.subscription.id,
      });
      expect(sent.every((body) => typeof body.subscriptionId === 'string')).toBe(true);
    });

    it("should be named by an operator's retry and replay", async () => {
      const stored = await storeDelivery();
      const expected = { deliveryId: stored.deliveryId, subscriptionId: stored.subscription.id };
      const retried = recordingQueue();
      const retry = adminRequest('POST', `/admin/deliveries/${stored.deliveryId}/retry`);
      expect((await fetchGateway(retry, { DELIVERIES: retried.queue })).status).toBe(202);
      expect(deliveryBodies(retried.batches)).toEqual([
        { ...expected, trigger: 'retry', requestedAt: expect.any(Number) },
      ]);

      const replayed = recordingQueue();
      const replay = adminRequest('POST', `/admin/events/${stored.eventId}/replay`, { json: {} });
      expect((await fetchGateway(replay, { DELIVERIES: replayed.queue })).status).toBe(202);
      expect(deliveryBodies(replayed.batches)).toEqual([
        { ...expected, trigger: 'replay', requestedAt: expect.any(Number) },
      ]);
    });

    it('should be named by a bulk recovery and a re-enable', async () => {
      const { subscription } = await createReceiverSubscription();
      const [failed] = await seedDeliveries({
        subscriptionId: subscription.id,
        eventType: `named_${crypto.randomUUID()}`,
        count: 1,
        createdAt: Date.now() - HOUR_MS,
      });
      const start = recordingQueue();
      await startRecovery(
        {
          since: new Date(Date.now() - 2 * HOUR_MS).toISOString(),
          subscription_id: subscription.id,
        },
        { DELIVERIES: start.queue },
      );
      const step = start.batches.flat()[0]?.body;
      const page = recordingQueue();
      await runQueue(DELIVERIES_QUEUE, [{ body: step }], { DELIVERIES: page.queue });
      expect(deliveryBodies(page.batches)).toEqual([
        expect.objectContaining({ deliveryId: failed, subscriptionId: subscription.id }),
      ]);

      const patch = (json: unknown, queue: Queue) =>
        fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${subscription.id}`, { json }), {
          DELIVERIES: queue,
        });
      await patch({ enabled: false }, recordingQueue().queue);
      const requeued = recordingQueue();
      await patch({ enabled: true, requeue_pending: true }, requeued.queue);
      expect(deliveryBodies(requeued.batches)).toEqual([
        expect.objectContaining({ deliveryId: failed, subscriptionId: subscription.id }),
      ]);
    });
  });

  describe('queue consumer handover', () => {
    it('should hand a message naming its subscription to the outbox without reading D1, and read it for one that does not', async () => {
      const named = await storeDelivery({ query: { status: '200' } });
      const unnamed = await storeDelivery({ query: { status: '200' } });
      const messages = [
        { deliveryId: named.deliveryId, subscriptionId: named.subscription.id },
        { deliveryId: unnamed.deliveryId },
      ].map((body, index) => ({
        id: `msg-${index}`,
        timestamp: new Date(),
        attempts: 1,
        body,
      }));
      const batch = createMessageBatch(DELIVERIES_QUEUE, messages);
      const outboxes = await prepareOutboxes(batch.messages, {
        ...env,
        ALLOW_LOCAL_SUBSCRIBERS: 'true',
      });
      const { db, statements } = recordingDb();
      const ctx = createExecutionContext();

      await worker.queue(batch, { ...env, DB: db }, ctx);

      const result = await settleOutboxes(outboxes, await getQueueResult(batch, ctx));
      expect(result.explicitAcks).toEqual(['msg-0', 'msg-1']);
      // Only the message without a subscription read its delivery's row.
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/FROM deliveries/);
      for (const stored of [named, unnamed]) {
        const delivery = await env.DB.prepare('SELECT status FROM deliveries WHERE id = ?1')
          .bind(stored.deliveryId)
          .first<{ status: string }>();
        expect(delivery?.status).toBe('delivered');
      }
    });
  });
});
