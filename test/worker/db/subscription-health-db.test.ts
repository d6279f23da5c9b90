/**
 * The D1 queries of subscriber health (worker/db/subscription-health.ts) against the real D1
 * of miniflare: the run of failures and its guards, the relay's disable and what a re-enable
 * re-queues. Each test uses its own ids.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  disableForHealth,
  moveHealth,
  requeueSubscriptionDeliveries,
} from '../../../worker/db/subscription-health.ts';
import { findSubscription, insertSubscription } from '../../../worker/db/subscriptions.ts';
import { insertDeliveries, storeEvent } from '../relay/delivery-helpers.ts';

const NOW = 1_900_000_000_000;

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
  describe('moveHealth', () => {
    it('should start a run at the first failure, keep its start, and end it on a success', async () => {
      const { id } = await subscriptionWithDelivery();
      expect(await moveHealth(env.DB, id, failure(NOW + 1))).toEqual({
        enabled: true,
        failingSince: NOW + 1,
      });
      await moveHealth(env.DB, id, failure(NOW + 2));
      expect((await findSubscription(env.DB, id))?.health).toEqual({
        failingSince: NOW + 1,
        disabledAt: null,
        changedAt: NOW + 1,
        reason: `failed at ${NOW + 1}`,
      });
      await moveHealth(env.DB, id, success(NOW + 3));
      expect((await findSubscription(env.DB, id))?.health).toEqual({
        failingSince: null,
        disabledAt: null,
        changedAt: NOW + 3,
        reason: `delivered at ${NOW + 3}`,
      });
      // A success while healthy changes nothing.
      await moveHealth(env.DB, id, success(NOW + 4));
      expect((await findSubscription(env.DB, id))?.health.changedAt).toBe(NOW + 3);
    });

    it("should leave a disabled subscription's state, and answer undefined", async () => {
      const { id } = await subscriptionWithDelivery(false);
      const before = (await findSubscription(env.DB, id))?.health;
      expect(await moveHealth(env.DB, id, failure(NOW + 5))).toBeUndefined();
      expect((await findSubscription(env.DB, id))?.health).toEqual(before);
    });

    it('should answer undefined, and write nothing, when the subscription is gone', async () => {
      const gone = `sub_gone_${crypto.randomUUID()}`;
      expect(await moveHealth(env.DB, gone, failure(NOW))).toBeUndefined();
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
      const { id } = await subscriptionWithDelivery();
      await moveHealth(env.DB, id, failure(NOW + 1));
      // A success then a new failure: the run that was long enough has ended.
      await moveHealth(env.DB, id, success(NOW + 2));
      await moveHealth(env.DB, id, failure(NOW + 3));
      const stale = { at: NOW + 4, reason: 'failed too long', failingSince: NOW + 1 };
      expect(await disableForHealth(env.DB, id, stale)).toBeUndefined();
      expect((await findSubscription(env.DB, id))?.enabled).toBe(true);
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
