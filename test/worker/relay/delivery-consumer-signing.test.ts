/**
 * The relay's queue consumer: Standard Webhooks signatures checked with
 * the `standardwebhooks` library (rotation included), messages skipped without a
 * request, and the dead-letter queue.
 */
import { env } from 'cloudflare:workers';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { updateSubscription } from '../../../worker/db/subscriptions.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { generateSubscriptionSecret } from '../../../worker/relay/subscription-secret.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import {
  type ReceivedDelivery,
  receivedUnder,
  runQueue,
  storeDelivery,
} from './delivery-helpers.ts';

useCapturedLogs();

/** The one request the receiver got under `key`. */
async function onlyReceived(key: string): Promise<ReceivedDelivery> {
  const received = await receivedUnder(key);
  expect(received).toHaveLength(1);
  const [request] = received;
  if (request === undefined) throw new Error(`nothing received under ${key}`);
  return request;
}

describe('relay consumer', () => {
  describe('signatures', () => {
    it('should sign so that standardwebhooks verifies, with webhook-id = event id', async () => {
      const stored = await storeDelivery();
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const request = await onlyReceived(stored.key);
      expect(request.headers['webhook-id']).toBe(stored.eventId);
      const timestamp = Number(request.headers['webhook-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const payload = new Webhook(stored.subscription.secret).verify(request.body, request.headers);
      expect(payload).toEqual(JSON.parse(stored.rawBody));
      const other = new Webhook(generateSubscriptionSecret());
      expect(() => other.verify(request.body, request.headers)).toThrow(WebhookVerificationError);
    });

    it('should carry both signatures while the previous secret is valid', async () => {
      const previousSecret = generateSubscriptionSecret();
      const stored = await storeDelivery({
        previousSecret,
        previousSecretExpiresAt: Date.now() + 3_600_000,
      });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const request = await onlyReceived(stored.key);
      const signatures = String(request.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      for (const secret of [stored.subscription.secret, previousSecret]) {
        expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(
          JSON.parse(stored.rawBody),
        );
      }
    });

    it('should sign with every secret of two rotations in a row while each is in its grace period', async () => {
      const stored = await storeDelivery();
      const secrets = [stored.subscription.secret];
      for (let rotation = 0; rotation < 2; rotation += 1) {
        const res = await fetchGateway(
          adminRequest('POST', `/admin/subscriptions/${stored.subscription.id}/rotate-secret`),
        );
        expect(res.status).toBe(200);
        secrets.push((await dataOf<{ secret: string }>(res)).secret);
      }
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const request = await onlyReceived(stored.key);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(3);
      // A subscriber still on the first secret (mid-rollout) verifies as well as one on the last.
      for (const secret of secrets) {
        expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(
          JSON.parse(stored.rawBody),
        );
      }
    });

    it('should drop the previous signature once the previous secret expired', async () => {
      const previousSecret = generateSubscriptionSecret();
      const stored = await storeDelivery({
        previousSecret,
        previousSecretExpiresAt: Date.now() - 1000,
      });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const request = await onlyReceived(stored.key);
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => new Webhook(previousSecret).verify(request.body, request.headers)).toThrow(
        WebhookVerificationError,
      );
    });
  });

  describe('skips', () => {
    it('should ack an already delivered delivery without a request', async () => {
      const stored = await storeDelivery();
      const message = { body: { deliveryId: stored.deliveryId } };
      await runQueue(DELIVERIES_QUEUE, [message]);
      const again = await runQueue(DELIVERIES_QUEUE, [message]);
      expect(again.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toHaveLength(1);
      expect((await findDelivery(env.DB, stored.deliveryId))?.attempts).toBe(1);
    });

    it('should ack without a request and mark failed when the subscription is disabled', async () => {
      const stored = await storeDelivery();
      await updateSubscription(env.DB, stored.subscription.id, { enabled: false }, Date.now());
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toEqual([]);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'failed',
        attempts: 0,
      });
    });

    it('should ack without a request when the subscription was deleted', async () => {
      const stored = await storeDelivery();
      await env.DB.prepare('DELETE FROM subscriptions WHERE id = ?1')
        .bind(stored.subscription.id)
        .run();
      const result = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toEqual([]);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('failed');
    });

    it.each([[{ deliveryId: 'dlv_missing' }], [{ id: 1 }], ['text']])(
      'should ack an unknown or malformed message %j',
      async (body) => {
        const result = await runQueue(DELIVERIES_QUEUE, [{ body }]);
        expect(result.explicitAcks).toEqual(['msg-0']);
        expect(result.retryMessages).toEqual([]);
      },
    );

    it('should refuse a loopback URL when ALLOW_LOCAL_SUBSCRIBERS is off, recording why', async () => {
      const stored = await storeDelivery();
      const result = await runQueue(
        DELIVERIES_QUEUE,
        [{ body: { deliveryId: stored.deliveryId } }],
        { ALLOW_LOCAL_SUBSCRIBERS: '' },
      );
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(stored.key)).toEqual([]);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('failed');
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt?.status).toBeNull();
      expect(attempt?.error).toContain('URL refused: Not allowed: loopback address');
    });
  });

  describe('queue (edgepay-deliveries-dlq)', () => {
    it('should mark a dead-lettered delivery failed and ack', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId }, attempts: 8 }]);
      const result = await runQueue(DELIVERIES_DEAD_LETTER_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastStatus: 500,
        nextAttemptAt: null,
      });
    });

    it('should leave a delivered delivery delivered', async () => {
      const stored = await storeDelivery();
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const result = await runQueue(DELIVERIES_DEAD_LETTER_QUEUE, [
        { body: { deliveryId: stored.deliveryId } },
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('delivered');
    });
  });

  describe('unknown queue', () => {
    it('should retry every message, one by one', async () => {
      const result = await runQueue('edgepay-unknown', [
        { body: { deliveryId: 'dlv_a' } },
        { body: { deliveryId: 'dlv_b' } },
      ]);
      expect(result.retryBatch.retry).toBe(false);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0', 'msg-1']);
    });
  });
});
