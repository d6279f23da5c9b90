/**
 * The D1 queries of the admin delivery listing and hourly chart
 * (worker/db/admin-deliveries.ts) against the real D1. The hourly counts are read at a
 * `now` of their own, hours in 2001 that no other test writes, so every count is exact.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  countDeliveriesByHour,
  HOUR_MS,
  listRecentDeliveries,
} from '../../../worker/db/admin-deliveries.ts';
import { insertDeliveries, storeEvent } from '../relay/delivery-helpers.ts';

/** A whole UTC hour in 2001, different on every run, so no other row is in range. */
function isolatedHour(): number {
  const base = Date.parse('2001-01-01T00:00:00.000Z');
  return base + Math.floor(Math.random() * 8000) * HOUR_MS;
}

/** A stored event (no subscription matches its type: no deliveries of its own). */
async function newEvent(): Promise<string> {
  return (await storeEvent(`db_${crypto.randomUUID()}`)).eventId;
}

describe('admin deliveries (D1)', () => {
  describe('countDeliveriesByHour', () => {
    it('should count each delivery in the hour of its created_at under its current status', async () => {
      const hour = isolatedHour();
      const eventId = await newEvent();
      await insertDeliveries([
        // The current hour (the one holding `now`): its first and last millisecond.
        { eventId, status: 'pending', createdAt: hour + 2 * HOUR_MS },
        { eventId, status: 'delivered', createdAt: hour + 3 * HOUR_MS - 1 },
        // Two hours earlier, settled in a later hour: counted where it was created.
        { eventId, status: 'delivered', createdAt: hour, updatedAt: hour + 2 * HOUR_MS },
        { eventId, status: 'delivered', createdAt: hour + 59 * 60_000 },
        { eventId, status: 'failed', createdAt: hour + 1 },
        // Before the first bucket and after the last one: not counted.
        { eventId, status: 'failed', createdAt: hour - 1 },
        { eventId, status: 'failed', createdAt: hour + 3 * HOUR_MS },
      ]);

      const buckets = await countDeliveriesByHour(env.DB, 3, hour + 2 * HOUR_MS + 1234);

      expect(buckets).toEqual([
        { hour, pending: 0, delivered: 2, failed: 1 },
        { hour: hour + HOUR_MS, pending: 0, delivered: 0, failed: 0 },
        { hour: hour + 2 * HOUR_MS, pending: 1, delivered: 1, failed: 0 },
      ]);
    });

    it('should answer exactly `hours` zero buckets, oldest first, when nothing was created', async () => {
      // A week before any hour the other tests write in ({@link isolatedHour} starts in 2001):
      // a random hour could put the 168 buckets over another test's deliveries.
      const hour = Date.parse('2000-06-01T00:00:00.000Z');
      const buckets = await countDeliveriesByHour(env.DB, 168, hour + 30 * 60_000);
      expect(buckets).toHaveLength(168);
      expect(buckets.at(-1)?.hour).toBe(hour);
      expect(buckets[0]?.hour).toBe(hour - 167 * HOUR_MS);
      buckets.forEach((bucket, index) => {
        expect(bucket).toEqual({
          hour: hour - (167 - index) * HOUR_MS,
          pending: 0,
          delivered: 0,
          failed: 0,
        });
      });
    });

    it('should answer the current hour alone for one hour', async () => {
      const hour = isolatedHour();
      const eventId = await newEvent();
      await insertDeliveries([
        { eventId, status: 'failed', createdAt: hour + 10 },
        { eventId, status: 'failed', createdAt: hour - 10 },
      ]);
      expect(await countDeliveriesByHour(env.DB, 1, hour + HOUR_MS - 1)).toEqual([
        { hour, pending: 0, delivered: 0, failed: 1 },
      ]);
    });
  });

  describe('listRecentDeliveries', () => {
    it('should page on (updated_at, id) newest first, ties by id descending, with the event type', async () => {
      const type = `db_list_${crypto.randomUUID()}`;
      const { eventId } = await storeEvent(type);
      const at = isolatedHour();
      const ids = await insertDeliveries(
        [0, 1, 1, 2, 3].map((offset) => ({ eventId, createdAt: at, updatedAt: at + offset })),
      );
      const tie = [ids[1], ids[2]].sort().reverse();
      const expected = [ids[4], ids[3], ...tie, ids[0]];
      const query = { status: null, subscriptionId: null, eventId, pageSize: 2 };

      const first = await listRecentDeliveries(env.DB, { ...query, after: null });
      const second = await listRecentDeliveries(env.DB, { ...query, after: first.next });
      const third = await listRecentDeliveries(env.DB, { ...query, after: second.next });

      expect(first.deliveries.map((d) => d.id)).toEqual(expected.slice(0, 2));
      expect(first.next).toEqual({ at: at + 2, id: expected[1] });
      expect(second.deliveries.map((d) => d.id)).toEqual(expected.slice(2, 4));
      expect(third.deliveries.map((d) => d.id)).toEqual(expected.slice(4));
      expect(third.next).toBeNull();
      expect(first.deliveries[0]).toMatchObject({
        eventId,
        eventType: type,
        status: 'pending',
        createdAt: at,
        updatedAt: at + 3,
      });
    });

    it('should apply every filter given together', async () => {
      const eventId = await newEvent();
      const subscriptionId = `sub_test_${crypto.randomUUID()}`;
      const at = isolatedHour();
      const [wanted] = await insertDeliveries([
        { eventId, subscriptionId, status: 'failed', createdAt: at },
      ]);
      await insertDeliveries([
        { eventId, status: 'failed', createdAt: at },
        { eventId: await newEvent(), subscriptionId, status: 'failed', createdAt: at },
      ]);
      const page = await listRecentDeliveries(env.DB, {
        status: 'failed',
        subscriptionId,
        eventId,
        after: null,
        pageSize: 10,
      });
      expect(page.deliveries.map((d) => d.id)).toEqual([wanted]);
      expect(page.next).toBeNull();
    });
  });
});
