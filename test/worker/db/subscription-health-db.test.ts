/**
 * The D1 queries of subscriber health (worker/db/subscription-health.ts) against the real D1
 * of miniflare: the run of failures and its guards, the relay's disable, the hourly counts
 * and what a re-enable re-queues. Each test uses its own ids.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  countRecentAttempts,
  disableForHealth,
  recordAttemptHealth,
  requeueSubscriptionDeliveries,
} from '../../../worker/db/subscription-health.ts';
import { findSubscription, insertSubscription } from '../../../worker/db/subscriptions.ts';
import { insertDeliveries, storeEvent } from '../relay/delivery-helpers.ts';

const NOW = 1_900_000_000_000;
const HOUR_MS = 3_600_000;

/** A subscription of its own and one delivery to it (of an event nothing else receives). */
async function subscriptionWithDelivery(enabled = true) {
  const id = `sub_health_${crypto.randomUUID()}`;
  await insertSubscription(env.DB, {
    id,
    url: 'https://hooks.example.com/',
    eventTypes: [`t_${crypto.randomUUID()}`],
    description: null,
    enabled,
    secret: 'whsec_x',
    previousSecrets: [],
    createdAt: NOW,
    updatedAt: NOW,
  });
  const event = await storeEvent(`other_${crypto.randomUUID()}`);
  const [deliveryId = ''] = await insertDeliveries([
    { eventId: event.eventId, subscriptionId: id, createdAt: NOW },
  ]);
  return { id, deliveryId };
}

const failure = (at: number) => ({ succeeded: false, at, reason: `failed at ${at}` });
const success = (at: number) => ({ succeeded: true, at, reason: `delivered at ${at}` });

describe('subscription health (D1)', () => {
  describe('recordAttemptHealth', () => {
    it('should start a run at the first failure, keep its start, and end it on a success', async () => {
      const { id, deliveryId } = await subscriptionWithDelivery();
      expect(await recordAttemptHealth(env.DB, deliveryId, failure(NOW + 1))).toEqual({
        subscriptionId: id,
        enabled: true,
        failingSince: NOW + 1,
      });
      await recordAttemptHealth(env.DB, deliveryId, failure(NOW + 2));
      expect((await findSubscription(env.DB, id))?.health).toEqual({
        failingSince: NOW + 1,
        disabledAt: null,
        changedAt: NOW + 1,
        reason: `failed at ${NOW + 1}`,
      });
      await recordAttemptHealth(env.DB, deliveryId, success(NOW + 3));
      expect((await findSubscription(env.DB, id))?.health).toEqual({
        failingSince: null,
        disabledAt: null,
        changedAt: NOW + 3,
        reason: `delivered at ${NOW + 3}`,
      });
      // A success while healthy changes nothing but the counts.
      await recordAttemptHealth(env.DB, deliveryId, success(NOW + 4));
      expect((await findSubscription(env.DB, id))?.health.changedAt).toBe(NOW + 3);
    });

    it("should count a disabled subscription's attempt but leave its state", async () => {
      const { id, deliveryId } = await subscriptionWithDelivery(false);
      const before = (await findSubscription(env.DB, id))?.health;
      expect(await recordAttemptHealth(env.DB, deliveryId, success(NOW + 5))).toMatchObject({
        enabled: false,
        failingSince: null,
      });
      expect((await findSubscription(env.DB, id))?.health).toEqual(before);
      expect((await countRecentAttempts(env.DB, [id], NOW + 5)).get(id)).toEqual({
        succeeded: 1,
        failed: 0,
      });
    });

    it('should answer undefined, and write nothing, when the subscription is gone', async () => {
      const event = await storeEvent(`other_${crypto.randomUUID()}`);
      const gone = `sub_gone_${crypto.randomUUID()}`;
      const [deliveryId = ''] = await insertDeliveries([
        { eventId: event.eventId, subscriptionId: gone, createdAt: NOW },
      ]);
      expect(await recordAttemptHealth(env.DB, deliveryId, failure(NOW))).toBeUndefined();
      expect((await countRecentAttempts(env.DB, [gone], NOW)).size).toBe(0);
    });
  });

  describe('disableForHealth', () => {
    it('should disable once, with the time and reason, and answer the URL', async () => {
      const { id } = await subscriptionWithDelivery();
      const disable = { at: NOW + 9, reason: 'gone' };
      expect(await disableForHealth(env.DB, id, disable)).toEqual({
        url: 'https://hooks.example.com/',
      });
      expect(await disableForHealth(env.DB, id, { at: NOW + 10, reason: 'again' })).toBeUndefined();
      expect(await findSubscription(env.DB, id)).toMatchObject({
        enabled: false,
        updatedAt: NOW + 9,
        health: { disabledAt: NOW + 9, changedAt: NOW + 9, reason: 'gone' },
      });
    });

    it('should not disable when the run of failures changed meanwhile', async () => {
      const { id, deliveryId } = await subscriptionWithDelivery();
      await recordAttemptHealth(env.DB, deliveryId, failure(NOW + 1));
      // A success then a new failure: the run that was long enough has ended.
      await recordAttemptHealth(env.DB, deliveryId, success(NOW + 2));
      await recordAttemptHealth(env.DB, deliveryId, failure(NOW + 3));
      const stale = { at: NOW + 4, reason: 'failed too long', failingSince: NOW + 1 };
      expect(await disableForHealth(env.DB, id, stale)).toBeUndefined();
      expect((await findSubscription(env.DB, id))?.enabled).toBe(true);
    });
  });

  describe('countRecentAttempts', () => {
    it('should sum the current hour and the 23 before it, per subscription', async () => {
      const a = await subscriptionWithDelivery();
      const b = await subscriptionWithDelivery();
      await recordAttemptHealth(env.DB, a.deliveryId, success(NOW - 23 * HOUR_MS));
      await recordAttemptHealth(env.DB, a.deliveryId, failure(NOW));
      await recordAttemptHealth(env.DB, a.deliveryId, success(NOW));
      await recordAttemptHealth(env.DB, b.deliveryId, failure(NOW - 25 * HOUR_MS));
      const counts = await countRecentAttempts(env.DB, [a.id, b.id], NOW);
      expect(counts.get(a.id)).toEqual({ succeeded: 2, failed: 1 });
      expect(counts.has(b.id)).toBe(false);
      expect((await countRecentAttempts(env.DB, [], NOW)).size).toBe(0);
    });
  });

  describe('requeueSubscriptionDeliveries', () => {
    it('should set pending, oldest first, the pending ones and those failed since', async () => {
      // Its own first delivery is pending, created at NOW.
      const { id, deliveryId: first } = await subscriptionWithDelivery();
      const events = await Promise.all(
        [0, 1, 2, 3].map(() => storeEvent(`other_${crypto.randomUUID()}`)),
      );
      const [old, recent, waiting, delivered] = await insertDeliveries([
        {
          eventId: events[0]?.eventId ?? '',
          subscriptionId: id,
          status: 'failed',
          createdAt: NOW - 10,
        },
        {
          eventId: events[1]?.eventId ?? '',
          subscriptionId: id,
          status: 'failed',
          createdAt: NOW + 10,
        },
        {
          eventId: events[2]?.eventId ?? '',
          subscriptionId: id,
          status: 'pending',
          createdAt: NOW - 20,
        },
        {
          eventId: events[3]?.eventId ?? '',
          subscriptionId: id,
          status: 'delivered',
          createdAt: NOW + 20,
        },
      ]);
      const ids = await requeueSubscriptionDeliveries(env.DB, id, NOW, NOW + 100);
      expect(ids).toEqual([waiting, first, recent]);
      expect(ids).not.toContain(old);
      expect(ids).not.toContain(delivered);
      const row = await env.DB.prepare(
        'SELECT status, next_attempt_at, updated_at FROM deliveries WHERE id = ?1',
      )
        .bind(recent)
        .first();
      expect(row).toEqual({ status: 'pending', next_attempt_at: NOW + 100, updated_at: NOW + 100 });
    });
  });
});
