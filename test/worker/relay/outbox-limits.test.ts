/**
 * A subscription's pace in its outbox (worker/relay/outbox-limits.ts): `max_in_flight`,
 * `max_per_second`, and a subscriber's `Retry-After` on 429 or 503 postponing its next
 * attempt, whichever delivery it is. Asserted on what was sent and recorded and on the
 * outbox's stored gate, never on elapsed time. Real consumer, Durable Objects, D1 and the
 * recording receiver over HTTP.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  type ReceiverSubscriptionInit,
  receivedUnder,
  storeEvent,
} from './delivery-helpers.ts';
import {
  gateOpensAt,
  heldDeliveries,
  outboxOf,
  prepareOutboxes,
  retryHeldNow,
  settleOutboxes,
} from './outbox-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const testEnv = () => ({ ...env, ALLOW_LOCAL_SUBSCRIBERS: 'true' });

interface Limits {
  readonly maxInFlight?: number;
  readonly maxPerSecond?: number;
}

/** A receiver subscription with `limits`, and `count` events for it. */
async function subscriptionWith(limits: Limits, count: number, init: ReceiverSubscriptionInit) {
  const eventType = `test_${crypto.randomUUID()}`;
  const created = await createReceiverSubscription({ ...init, eventTypes: [eventType] });
  await env.DB.prepare(
    'UPDATE subscriptions SET max_in_flight = ?1, max_per_second = ?2 WHERE id = ?3',
  )
    .bind(limits.maxInFlight ?? null, limits.maxPerSecond ?? null, created.subscription.id)
    .run();
  const deliveryIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const stored = await storeEvent(eventType);
    deliveryIds.push(...stored.deliveryIds);
  }
  return { ...created, deliveryIds, outbox: outboxOf(created.subscription.id) };
}

/** Runs the consumer on one message per delivery and waits until its outbox is idle. */
async function deliver(deliveryIds: readonly string[], wait = true) {
  const batch = createMessageBatch(
    DELIVERIES_QUEUE,
    deliveryIds.map((deliveryId, index) => ({
      id: `msg-${index}`,
      timestamp: new Date(),
      attempts: 1,
      body: { deliveryId },
    })),
  );
  const outboxes = await prepareOutboxes(batch.messages, testEnv());
  const ctx = createExecutionContext();
  await worker.queue(batch, testEnv(), ctx);
  const result = await getQueueResult(batch, ctx);
  expect(result.explicitAcks).toHaveLength(deliveryIds.length);
  if (wait) await settleOutboxes(outboxes, result);
}

async function receiverControl(path: string, key: string): Promise<void> {
  const res = await fetch(`${inject('receiverUrl')}${path}?key=${encodeURIComponent(key)}`, {
    method: 'PUT',
  });
  expect(res.status).toBe(200);
}

/** Waits (bounded: 2000 polls 10 ms apart) until the receiver got `count` requests under `key`. */
async function untilReceived(key: string, count: number): Promise<void> {
  for (let polls = 0; (await receivedUnder(key)).length < count; polls++) {
    if (polls >= 2000) throw new Error(`the receiver never got ${count} requests under ${key}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const attemptCounts = async (deliveryIds: readonly string[]) =>
  Promise.all(deliveryIds.map(async (id) => (await listDeliveryAttempts(env.DB, id)).length));

describe('outbox limits', () => {
  describe('max_in_flight', () => {
    it('should have at most max_in_flight attempts out at once', async () => {
      const sub = await subscriptionWith({ maxInFlight: 1 }, 3, {});
      await receiverControl('/__hold', sub.key);
      try {
        await deliver(sub.deliveryIds, false);
        await untilReceived(sub.key, 1);
        const rows = await heldDeliveries(sub.outbox);
        expect(rows).toHaveLength(3);
        expect(rows.filter((row) => row.sending_since !== null)).toHaveLength(1);
        expect(await receivedUnder(sub.key)).toHaveLength(1);
      } finally {
        await receiverControl('/__release', sub.key);
      }
      await retryHeldNow(sub.outbox);
      expect(await receivedUnder(sub.key)).toHaveLength(3);
      expect(await attemptCounts(sub.deliveryIds)).toEqual([1, 1, 1]);
    });
  });

  describe('max_per_second', () => {
    it('should start one attempt, then hold the next until the rate allows it', async () => {
      // 0.01 a second: one attempt every 100 s.
      const sub = await subscriptionWith({ maxPerSecond: 0.01 }, 2, { query: { status: '204' } });
      const before = Date.now();
      await deliver(sub.deliveryIds);
      expect(await receivedUnder(sub.key)).toHaveLength(1);
      expect((await attemptCounts(sub.deliveryIds)).sort()).toEqual([0, 1]);
      const opensAt = await gateOpensAt(sub.outbox);
      expect(opensAt).toBeGreaterThanOrEqual(before + 100_000);
      const [waiting] = await heldDeliveries(sub.outbox);
      expect(waiting).toMatchObject({ sending_since: null, attempts: 1 });
    });
  });

  describe('Retry-After', () => {
    it.each([429, 503])(
      'should postpone every delivery of the subscription after a %i with Retry-After',
      async (status) => {
        const sub = await subscriptionWith({ maxInFlight: 1 }, 2, {
          query: { status: String(status), retry_after: '120' },
        });
        const before = Date.now();
        await deliver(sub.deliveryIds);
        // The first got the answer; the second, due now, was not sent.
        expect(await receivedUnder(sub.key)).toHaveLength(1);
        expect((await attemptCounts(sub.deliveryIds)).sort()).toEqual([0, 1]);
        expect(await gateOpensAt(sub.outbox)).toBeGreaterThanOrEqual(before + 120_000);
        expect((await heldDeliveries(sub.outbox)).every((row) => row.sending_since === null)).toBe(
          true,
        );
      },
    );

    it('should not pause on a 503 without Retry-After', async () => {
      const sub = await subscriptionWith({ maxInFlight: 1 }, 2, { query: { status: '503' } });
      await deliver(sub.deliveryIds);
      expect(await receivedUnder(sub.key)).toHaveLength(2);
      expect(await gateOpensAt(sub.outbox)).toBe(0);
    });
  });
});
