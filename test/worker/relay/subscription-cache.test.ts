/**
 * The copies of the subscriptions: the fan-out's, one per isolate
 * (worker/db/subscription-cache.ts), sees a change made elsewhere once it is older than
 * `SUBSCRIPTION_CACHE_SEC`; each outbox's (worker/relay/outbox-subscription.ts) is told of a
 * change through the admin API at once (a new secret, a disable), where a change written behind
 * the API's back waits for the copy to expire. Over the real D1, the real outbox objects and
 * the recording receiver.
 */
import { env } from 'cloudflare:workers';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedSubscriptions } from '../../../worker/db/subscription-cache.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { generateSubscriptionSecret } from '../../../worker/relay/subscription-secret.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
  storeDelivery,
  storeEvent,
} from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** The settings as shipped: each isolate reuses its copy for 10 s. */
const SHIPPED = { SUBSCRIPTION_CACHE_SEC: '10' };

/** Runs the queue on one delivery with the shipped copy lifetime in the outbox. */
function deliver(deliveryId: string) {
  return runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId } }], SHIPPED);
}

/** The last request the receiver got under `key`. */
async function lastReceived(key: string) {
  const received = await receivedUnder(key);
  const request = received.at(-1);
  if (request === undefined) throw new Error(`nothing received under ${key}`);
  return { request, count: received.length };
}

/** Whether `secret` verifies the request's signatures. */
function signedWith(secret: string, request: { body: string; headers: Record<string, string> }) {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

describe('subscriptions read from a copy per isolate', () => {
  it('should see a change made elsewhere once the copy is older than its lifetime', async () => {
    const { subscription } = await createReceiverSubscription({ eventTypes: ['cache.one'] });
    const oneSecond = { ...env, SUBSCRIPTION_CACHE_SEC: '1' };
    expect((await cachedSubscriptions(oneSecond)).byId.get(subscription.id)?.eventTypes).toEqual([
      'cache.one',
    ]);
    // Another isolate's change: written to D1, this isolate not told.
    await env.DB.prepare('UPDATE subscriptions SET event_types = ?2 WHERE id = ?1')
      .bind(subscription.id, JSON.stringify(['cache.two']))
      .run();
    expect((await cachedSubscriptions(oneSecond)).byId.get(subscription.id)?.eventTypes).toEqual([
      'cache.one',
    ]);
    // Without a copy (0), every read is fresh.
    const fresh = { ...env, SUBSCRIPTION_CACHE_SEC: '0' };
    expect((await cachedSubscriptions(fresh)).byId.get(subscription.id)?.eventTypes).toEqual([
      'cache.two',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await cachedSubscriptions(oneSecond)).byId.get(subscription.id)?.eventTypes).toEqual([
      'cache.two',
    ]);
  });

  it("should tell the subscription's outbox of a new secret at once", async () => {
    const stored = await storeDelivery();
    const { id, secret } = stored.subscription;
    const type = (stored.subscription.eventTypes ?? [])[0] ?? '';
    await deliver(stored.deliveryId);
    expect(signedWith(secret, (await lastReceived(stored.key)).request)).toBe(true);

    // A secret written behind the admin API's back: the outbox keeps signing with its copy.
    const unseen = generateSubscriptionSecret();
    await env.DB.prepare('UPDATE subscriptions SET secret = ?2 WHERE id = ?1')
      .bind(id, unseen)
      .run();
    await deliver((await storeEvent(type)).deliveryIds[0] ?? '');
    const stale = (await lastReceived(stored.key)).request;
    expect(signedWith(secret, stale)).toBe(true);
    expect(signedWith(unseen, stale)).toBe(false);

    // Rotated through the admin API: the outbox is told, the next delivery has the new one.
    const res = await fetchGateway(
      adminRequest('POST', `/admin/subscriptions/${id}/rotate-secret`),
    );
    const rotated = (await dataOf<{ secret: string }>(res)).secret;
    await deliver((await storeEvent(type)).deliveryIds[0] ?? '');
    const { request, count } = await lastReceived(stored.key);
    expect(count).toBe(3);
    expect(signedWith(rotated, request)).toBe(true);
  });

  it("should tell the subscription's outbox of a disable at once", async () => {
    const stored = await storeDelivery();
    const { id } = stored.subscription;
    const type = (stored.subscription.eventTypes ?? [])[0] ?? '';
    await deliver(stored.deliveryId);
    // Fanned out before the disable: its outbox's copy still has the subscription enabled.
    const later = (await storeEvent(type)).deliveryIds[0] ?? '';
    const res = await fetchGateway(
      adminRequest('PATCH', `/admin/subscriptions/${id}`, { json: { enabled: false } }),
    );
    expect(res.status).toBe(200);
    await deliver(later);
    // Told at once: the delivery is skipped, nothing sent.
    expect(await receivedUnder(stored.key)).toHaveLength(1);
  });
});
