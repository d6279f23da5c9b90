/**
 * The relay's queue consumer, outcomes: through the real Worker's
 * `queue` handler with `createMessageBatch` / `getQueueResult`, the real D1, and the
 * recording receiver of test/global-setup.ts over real HTTP.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { findSubscription } from '../../../worker/db/subscriptions.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import { receivedUnder, runQueue, setReceiverStatus, storeDelivery } from './delivery-helpers.ts';
import { outboxOf, retryHeldNow } from './outbox-helpers.ts';

useCapturedLogs();

describe('relay consumer', () => {
  describe('queue (edgepay-deliveries)', () => {
    it('should POST the original body, mark a 2xx delivered, ack and record the attempt', async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      const before = Date.now();
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(result.retryMessages).toEqual([]);
      const [request, ...more] = await receivedUnder(stored.key);
      expect(more).toEqual([]);
      expect(request?.method).toBe('POST');
      expect(request?.body).toBe(stored.rawBody);
      expect(request?.headers['content-type']).toBe('application/json');
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        lastStatus: 204,
        nextAttemptAt: null,
      });
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt).toMatchObject({
        attempt: 1,
        status: 204,
        error: null,
        responseExcerpt: null,
      });
      expect(attempt?.startedAt).toBeGreaterThanOrEqual(before);
      expect(attempt?.latencyMs).toBeGreaterThanOrEqual(0);
    });

    it('should retry a 500 after the first scheduled delay (5 s ±20%) and record the attempt', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual([]);
      expect(result.retryMessages).toHaveLength(1);
      const delay = result.retryMessages[0]?.delaySeconds ?? -1;
      expect(delay).toBeGreaterThanOrEqual(4);
      expect(delay).toBeLessThanOrEqual(6);
      const delivery = await findDelivery(env.DB, stored.deliveryId);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500 });
      expect(delivery?.nextAttemptAt).toBeGreaterThan(Date.now() + 3000);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 500, error: null, responseExcerpt: 'answered 500' },
      ]);
    });

    it('should follow the schedule by message.attempts (third attempt: 30 min ±20%)', async () => {
      const stored = await storeDelivery({ query: { status: '502' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId }, attempts: 3 },
      ]);
      const delay = result.retryMessages[0]?.delaySeconds ?? -1;
      expect(delay).toBeGreaterThanOrEqual(1440);
      expect(delay).toBeLessThanOrEqual(2160);
    });

    it.each([
      ['delay-seconds', '120', 120, 120],
      ['an HTTP date', () => new Date(Date.now() + 600_000).toUTCString(), 595, 600],
      ['a value past 12 h, capped', '100000', 43_200, 43_200],
    ])('should honour Retry-After as %s', async (_, value, min, max) => {
      const retryAfter = typeof value === 'function' ? value() : value;
      const stored = await storeDelivery({ query: { status: '503', retry_after: retryAfter } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      const delay = result.retryMessages[0]?.delaySeconds ?? -1;
      expect(delay).toBeGreaterThanOrEqual(min);
      expect(delay).toBeLessThanOrEqual(max);
    });

    it('should treat a 3xx as a failure without following it', async () => {
      const stored = await storeDelivery({ query: { status: '302' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toHaveLength(1);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'pending',
        lastStatus: 302,
      });
    });

    it('should record a network error with no status and retry', async () => {
      const stored = await storeDelivery({ url: 'http://127.0.0.1:1/hooks' });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt).toMatchObject({ attempt: 1, status: null, responseExcerpt: null });
      expect(attempt?.error).toEqual(expect.any(String));
      expect(attempt?.error).not.toBe('');
    });

    it('should fail once, with an attempt row, an event whose id no header can carry', async () => {
      // Stored before the ingress refused such ids: a newline in webhook-id.
      const stored = await storeDelivery({}, `evt\n${crypto.randomUUID()}`);
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.retryMessages).toEqual([]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toEqual([]);
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt).toMatchObject({ attempt: 1, status: null });
      expect(attempt?.error).toMatch(/webhook-id/);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({ status: 'failed' });
    });

    it('should keep only the first 2 KB of the response body', async () => {
      const stored = await storeDelivery({
        query: { status: '500', body_prefix: 'x'.repeat(3000) },
      });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt?.responseExcerpt).toBe('x'.repeat(2048));
    });

    it('should disable the subscription on a 410, mark the delivery failed and ack', async () => {
      const stored = await storeDelivery({ query: { status: '410' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(result.retryMessages).toEqual([]);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'failed',
        lastStatus: 410,
        nextAttemptAt: null,
      });
      expect((await findSubscription(env.DB, stored.subscription.id))?.enabled).toBe(false);
    });

    it('should ack and retry per message within one batch', async () => {
      const ok = await storeDelivery({ query: { status: '200' } });
      const down = await storeDelivery({ query: { status: '500' } });
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: down.deliveryId } },
        { body: { deliveryId: ok.deliveryId } },
      ]);
      expect(result.ackAll).toBe(false);
      expect(result.retryBatch.retry).toBe(false);
      expect(result.explicitAcks).toEqual(['msg-1']);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
    });

    it('should deliver to a subscriber down for several attempts once it is back', async () => {
      const stored = await storeDelivery();
      await setReceiverStatus(stored.key, 503);
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      // The retries are the subscription's outbox's, each run when it falls due.
      const outbox = outboxOf(stored.subscription.id);
      for (const attempts of [3, 4]) {
        expect(await retryHeldNow(outbox)).toMatchObject([{ attempts }]);
      }
      await setReceiverStatus(stored.key, 200);
      expect(await retryHeldNow(outbox)).toEqual([]);
      const received = await receivedUnder(stored.key);
      expect(received.map((r) => r.body)).toEqual(Array(4).fill(stored.rawBody));
      expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(
        new Set([stored.eventId]),
      );
      expect((await listDeliveryAttempts(env.DB, stored.deliveryId)).map((a) => a.status)).toEqual([
        503, 503, 503, 200,
      ]);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'delivered',
        attempts: 4,
      });
    });
  });
});
