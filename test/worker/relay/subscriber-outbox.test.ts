/**
 * The subscription outboxes (worker/relay/subscriber-outbox.ts): the consumer hands each
 * delivery to its subscription's outbox and acks it at once, so a stalled subscriber holds up
 * only its own deliveries; the timing windows of the handover (a message delivered again, an
 * instance restarted mid-send) never send a delivery twice without a record between. Real
 * Worker `queue` handler, Durable Objects, D1, and the recording receiver over HTTP.
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import {
  listDeliveryAttempts,
  recordDeliveryAttempt,
} from '../../../worker/db/delivery-attempts.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import { meteredNamespace, newMeter } from '../scale/metered-bindings.ts';
import {
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
  storeDelivery,
  storeEvent,
} from './delivery-helpers.ts';
import {
  heldDeliveries,
  outboxOf,
  prepareOutboxes,
  retryHeldNow,
  settleOutboxes,
} from './outbox-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const testEnv = () => ({ ...env, ALLOW_LOCAL_SUBSCRIBERS: 'true' });

async function receiverControl(path: string, key: string): Promise<void> {
  const res = await fetch(`${inject('receiverUrl')}${path}?key=${encodeURIComponent(key)}`, {
    method: 'PUT',
  });
  expect(res.status).toBe(200);
}

/** Runs the consumer alone on `deliveryIds`, one message each; returns what it acked. */
async function consume(deliveryIds: readonly string[], attempts = 1): Promise<string[]> {
  const batch = createMessageBatch(
    DELIVERIES_QUEUE,
    deliveryIds.map((deliveryId, index) => ({
      id: `msg-${index}`,
      timestamp: new Date(),
      attempts,
      body: { deliveryId },
    })),
  );
  await prepareOutboxes(batch.messages, testEnv());
  const ctx = createExecutionContext();
  await worker.queue(batch, testEnv(), ctx);
  return (await getQueueResult(batch, ctx)).explicitAcks;
}

/** Waits (bounded: 2000 polls 10 ms apart) until the receiver got `count` requests under `key`. */
async function untilReceived(key: string, count: number): Promise<void> {
  for (let polls = 0; (await receivedUnder(key)).length < count; polls++) {
    if (polls >= 2000) throw new Error(`the receiver never got ${count} requests under ${key}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until `subscriptionId`'s outbox has nothing out and nothing due now. */
const settled = (subscriptionId: string) =>
  settleOutboxes([{ msgId: 'x', deliveryId: '', stub: outboxOf(subscriptionId) }], {
    outcome: 'ok',
    ackAll: false,
    retryBatch: { retry: false },
    explicitAcks: ['x'],
    retryMessages: [],
  });

describe('SubscriberOutbox', () => {
  describe('isolation', () => {
    it("should record another subscription's first attempt while a subscriber holds its request", async () => {
      const stalled = await storeDelivery();
      const healthy = await storeDelivery({ query: { status: '204' } });
      await receiverControl('/__hold', stalled.key);
      try {
        const acked = await consume([stalled.deliveryId, healthy.deliveryId]);
        // The consumer acked both while the stalled subscriber still holds its request.
        expect(acked).toEqual(['msg-0', 'msg-1']);
        await settled(healthy.subscription.id);
        await untilReceived(stalled.key, 1);
        expect(await findDelivery(env.DB, healthy.deliveryId)).toMatchObject({
          status: 'delivered',
          attempts: 1,
        });
        expect(await findDelivery(env.DB, stalled.deliveryId)).toMatchObject({
          status: 'pending',
          attempts: 0,
        });
        const [out] = await heldDeliveries(outboxOf(stalled.subscription.id));
        expect(out?.sending_since).toEqual(expect.any(Number));
      } finally {
        await receiverControl('/__release', stalled.key);
      }
      await settled(stalled.subscription.id);
      expect(await listDeliveryAttempts(env.DB, stalled.deliveryId)).toMatchObject([
        { attempt: 1, status: 200 },
      ]);
    });
  });

  describe('accept', () => {
    it("should hand a batch's deliveries to each subscription's outbox in one call", async () => {
      const stored = await storeDelivery();
      const type = (stored.subscription.eventTypes ?? [])[0] ?? '';
      const more = [await storeEvent(type), await storeEvent(type)];
      const other = await storeDelivery();
      const deliveryIds = [
        stored.deliveryId,
        ...more.map((event) => event.deliveryIds[0] ?? ''),
        other.deliveryId,
      ];
      const meter = newMeter();
      const result = await runQueue(
        DELIVERIES_QUEUE,
        deliveryIds.map((deliveryId) => ({ body: { deliveryId } })),
        { SUBSCRIBER_OUTBOX: meteredNamespace(meter, 'SUBSCRIBER_OUTBOX', env.SUBSCRIBER_OUTBOX) },
      );
      // Two subscriptions, two calls: one per outbox, not one per delivery.
      expect(meter.objectRequests).toEqual({ SUBSCRIBER_OUTBOX: 2 });
      expect(result.explicitAcks).toEqual(['msg-0', 'msg-1', 'msg-2', 'msg-3']);
      expect(await receivedUnder(stored.key)).toHaveLength(3);
      expect(await receivedUnder(other.key)).toHaveLength(1);
    });

    it("should retry the messages of an outbox that fails, and ack the others'", async () => {
      const failing = await storeDelivery();
      const healthy = await storeDelivery();
      const outboxes = new Proxy(env.SUBSCRIBER_OUTBOX, {
        get: (target, name) =>
          name === 'getByName'
            ? (id: string) =>
                id === failing.subscription.id
                  ? { accept: () => Promise.reject(new Error('outbox unavailable')) }
                  : target.getByName(id)
            : Reflect.get(target, name),
      });
      const result = await runQueue(
        DELIVERIES_QUEUE,
        [failing.deliveryId, healthy.deliveryId].map((deliveryId) => ({ body: { deliveryId } })),
        { SUBSCRIBER_OUTBOX: outboxes },
      );
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(result.explicitAcks).toEqual(['msg-1']);
      expect(await receivedUnder(failing.key)).toEqual([]);
      expect(await receivedUnder(healthy.key)).toHaveLength(1);
    });

    it('should not send again when the queue delivers a handed-over message again', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      const message = { body: { deliveryId: stored.deliveryId }, timestamp: new Date() };
      await runQueue(DELIVERIES_QUEUE, [message]);
      const [before] = await heldDeliveries(outboxOf(stored.subscription.id));
      // The consumer stopped before its ack: the queue delivers the message again.
      const again = await runQueue(DELIVERIES_QUEUE, [{ ...message, attempts: 2 }]);
      expect(again.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toHaveLength(1);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toHaveLength(1);
      expect(await heldDeliveries(outboxOf(stored.subscription.id))).toEqual([before]);
    });

    it('should not send again when the message comes back while its attempt is out', async () => {
      const stored = await storeDelivery();
      await receiverControl('/__hold', stored.key);
      try {
        expect(await consume([stored.deliveryId])).toEqual(['msg-0']);
        await untilReceived(stored.key, 1);
        expect(await consume([stored.deliveryId], 2)).toEqual(['msg-0']);
        expect(await consume([stored.deliveryId], 1)).toEqual(['msg-0']);
      } finally {
        await receiverControl('/__release', stored.key);
      }
      await settled(stored.subscription.id);
      expect(await receivedUnder(stored.key)).toHaveLength(1);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 200 },
      ]);
    });

    it('should make a held retry due now for a new message (an operator retry)', async () => {
      const stored = await storeDelivery({ query: { status: '503' } });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const body = { deliveryId: stored.deliveryId, trigger: 'retry', requestedAt: Date.now() };
      const result = await runQueue(DELIVERIES_QUEUE, [{ body }]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, trigger: 'schedule' },
        { attempt: 2, trigger: 'retry' },
      ]);
      // A fresh schedule, as a new queue message had: the next retry is the first (5 s).
      const [held] = await heldDeliveries(outboxOf(stored.subscription.id));
      expect(held).toMatchObject({ attempts: 2 });
      expect(held?.retry_delay_sec).toBeLessThanOrEqual(6);
    });

    it('should make a held retry due now for a new message the queue delivers a second time', async () => {
      const stored = await storeDelivery({ query: { status: '503' } });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      // A recovery's message whose first handover failed (the outbox did not answer in
      // time): the queue delivers it again, counting 2, but it is not the fan-out's message.
      const body = { deliveryId: stored.deliveryId, trigger: 'recover', requestedAt: Date.now() };
      const result = await runQueue(DELIVERIES_QUEUE, [{ body, attempts: 2 }]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, trigger: 'schedule' },
        { attempt: 2, trigger: 'recover' },
      ]);
    });
  });

  describe('retries', () => {
    it('should fail the delivery after its last scheduled attempt', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId }, attempts: 8 },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'failed',
        attempts: 1,
        nextAttemptAt: null,
      });
      expect(await heldDeliveries(outboxOf(stored.subscription.id))).toEqual([]);
    });
  });

  describe('alarm after a restart', () => {
    // A restart mid-send, as the new instance finds it: the row marked out, nothing in memory
    // (evictDurableObject waits for the pending request, so it cannot cut one short here).
    /** A row as an instance that stopped mid-send left it, and the alarm due. */
    async function interruptedRow(subscriptionId: string, deliveryId: string, since: number) {
      const stub = outboxOf(subscriptionId);
      await runInDurableObject(stub, async (instance, state) => {
        (instance as unknown as { env: Env }).env = testEnv();
        state.storage.sql.exec(
          `INSERT INTO outbox (delivery_id, body, attempts, due_at, sending_since)
           VALUES (?, ?, 1, ?, ?)`,
          deliveryId,
          JSON.stringify({ deliveryId }),
          since,
          since,
        );
        await state.storage.setAlarm(Date.now());
      });
      await runDurableObjectAlarm(stub);
      await settled(subscriptionId);
      return stub;
    }

    it('should record an interrupted attempt and retry it on the schedule, sending nothing at once', async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      const since = Date.now() - 1000;
      const stub = await interruptedRow(stored.subscription.id, stored.deliveryId, since);
      expect(await receivedUnder(stored.key)).toEqual([]);
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt).toMatchObject({ attempt: 1, status: null, startedAt: since });
      expect(attempt?.error).toMatch(/^interrupted/);
      const [held] = await heldDeliveries(stub);
      expect(held).toMatchObject({ attempts: 2, sending_since: null });
      expect(held?.retry_delay_sec).toBeGreaterThanOrEqual(4);
      expect(await retryHeldNow(stub)).toEqual([]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: null },
        { attempt: 2, status: 204 },
      ]);
    });

    it('should not record twice an attempt recorded before the restart', async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      const since = Date.now() - 1000;
      const nextAttemptAt = Date.now() + 300_000;
      await recordDeliveryAttempt(
        env.DB,
        stored.deliveryId,
        {
          startedAt: since + 10,
          status: 500,
          latencyMs: 5,
          error: null,
          responseExcerpt: null,
          deliveryStatus: 'pending',
          nextAttemptAt,
        },
        since + 20,
      );
      const stub = await interruptedRow(stored.subscription.id, stored.deliveryId, since);
      expect(await receivedUnder(stored.key)).toEqual([]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toHaveLength(1);
      const [held] = await heldDeliveries(stub);
      expect(held).toMatchObject({ attempts: 2, sending_since: null });
      expect(held?.due_at).toBeGreaterThanOrEqual(nextAttemptAt);
    });

    it('should let go of an interrupted attempt whose delivery is settled', async () => {
      const stored = await storeDelivery();
      await env.DB.prepare(`UPDATE deliveries SET status = 'delivered' WHERE id = ?1`)
        .bind(stored.deliveryId)
        .run();
      const stub = await interruptedRow(stored.subscription.id, stored.deliveryId, Date.now());
      expect(await heldDeliveries(stub)).toEqual([]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toEqual([]);
      expect(await receivedUnder(stored.key)).toEqual([]);
    });
  });
});
