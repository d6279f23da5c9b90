/**
 * `GET /admin/deliveries`, `/counts` and `/hourly` over three event shards
 * (D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2), through the real Worker and real D1: the listing
 * merges one page per shard newest first with a cursor that holds while deliveries are
 * written between pages; the counts and the hourly buckets are every shard's, summed.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../../worker/db/admin-deliveries.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import { eventIdIn, SHARDS, type ShardName, THREE_SHARDS } from '../shard-databases.ts';
import { insertShardDelivery, storeShardedEvent } from './sharded-events.ts';

useCapturedLogs();

/** Most pages a walk reads: far more than the test stores. */
const MAX_PAGES = 50;

interface Counts {
  pending: number;
  delivered: number;
  failed: number;
  total: number;
}

interface Hour {
  hour: string;
  delivered: number;
  pending: number;
  failed: number;
}

async function getData<T>(path: string): Promise<T> {
  const res = await fetchGateway(adminRequest('GET', path), THREE_SHARDS);
  expect(res.status).toBe(200);
  return dataOf<T>(res);
}

/** One stored event per shard, for delivery rows to hang from. */
async function eventPerShard(): Promise<Record<ShardName, string>> {
  const type = `deliveries_${crypto.randomUUID()}`;
  const ids = await Promise.all(
    SHARDS.map(async (shard) => {
      const stored = await storeShardedEvent(type, { eventId: await eventIdIn(shard) });
      return [shard, stored.eventId] as const;
    }),
  );
  return Object.fromEntries(ids) as Record<ShardName, string>;
}

describe('GET /admin/deliveries over three shards', () => {
  it('should walk every delivery of every shard once, most recently updated first', async () => {
    const type = `walk_${crypto.randomUUID()}`;
    const subscriptionId = `sub_test_${crypto.randomUUID()}`;
    /** A delivery to the test's subscription, of a new event in `shard`. */
    const deliver = async (shard: ShardName, createdAt: number, updatedAt = createdAt) => {
      const event = await storeShardedEvent(type, { eventId: await eventIdIn(shard) });
      const id = await insertShardDelivery(shard, {
        eventId: event.eventId,
        subscriptionId,
        createdAt,
        updatedAt,
      });
      return { id, updatedAt };
    };
    const base = Date.now() - HOUR_MS;
    const stored: { id: string; updatedAt: number }[] = [];
    for (let index = 0; index < 9; index += 1) {
      // Pairs share a millisecond across shards: ties by id.
      const updatedAt = base - Math.floor(index / 2) * 1000;
      stored.push(await deliver(SHARDS[index % 3] ?? 'DB', updatedAt - 5000, updatedAt));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const query = new URLSearchParams({ subscription_id: subscriptionId, page_size: '4' });
      if (cursor !== null) query.set('cursor', cursor);
      const res = await fetchGateway(
        adminRequest('GET', `/admin/deliveries?${query}`),
        THREE_SHARDS,
      );
      expect(res.status).toBe(200);
      const json = (await res.json()) as { data: { id: string }[]; next_cursor: string | null };
      seen.push(...json.data.map((delivery) => delivery.id));
      cursor = json.next_cursor;
      if (cursor === null) break;
      // A delivery written between two pages is newer than the cursor: no later page has it.
      await deliver(SHARDS[(page + 1) % 3] ?? 'DB', Date.now());
    }
    const expected = [...stored].sort((a, b) =>
      a.updatedAt !== b.updatedAt ? b.updatedAt - a.updatedAt : a.id < b.id ? 1 : -1,
    );
    expect(seen).toEqual(expected.map((delivery) => delivery.id));
  });
});

describe('GET /admin/deliveries/counts over three shards', () => {
  it('should sum every shard', async () => {
    const events = await eventPerShard();
    const before = await getData<Counts>('/admin/deliveries/counts');
    const now = Date.now();
    const added: [ShardName, 'pending' | 'delivered' | 'failed'][] = [
      ['DB', 'pending'],
      ['DB_SHARD_1', 'delivered'],
      ['DB_SHARD_1', 'failed'],
      ['DB_SHARD_2', 'failed'],
      ['DB_SHARD_2', 'pending'],
    ];
    for (const [shard, status] of added) {
      await insertShardDelivery(shard, {
        eventId: events[shard],
        subscriptionId: `sub_test_${crypto.randomUUID()}`,
        status,
        createdAt: now,
      });
    }
    const after = await getData<Counts>('/admin/deliveries/counts');
    expect(after).toEqual({
      pending: before.pending + 2,
      delivered: before.delivered + 1,
      failed: before.failed + 2,
      total: before.total + 5,
    });
    const stored = await Promise.all(
      SHARDS.map(async (shard) => {
        const row = await env[shard]
          .prepare('SELECT COUNT(*) AS n FROM deliveries')
          .first<{ n: number }>();
        return row?.n ?? 0;
      }),
    );
    expect(after.total).toBe(stored.reduce((sum, n) => sum + n, 0));
  });
});

describe('GET /admin/deliveries/hourly over three shards', () => {
  /** Deliveries added per bucket of a 3-hour chart, oldest hour first. */
  const ADDED = [
    { delivered: 2, pending: 0, failed: 0 },
    { delivered: 0, pending: 0, failed: 2 },
    { delivered: 0, pending: 1, failed: 0 },
  ];

  /** Adds {@link ADDED} over the shards; returns the chart before and after. */
  async function addToChart(): Promise<{ before: Hour[]; after: Hour[] }> {
    const events = await eventPerShard();
    const before = (await getData<{ hours: Hour[] }>('/admin/deliveries/hourly?hours=3')).hours;
    const thisHour = Date.parse(before.at(-1)?.hour ?? '');
    const added: [ShardName, 'pending' | 'delivered' | 'failed', number][] = [
      ['DB_SHARD_1', 'delivered', thisHour - 2 * HOUR_MS + 10],
      ['DB_SHARD_2', 'delivered', thisHour - 2 * HOUR_MS + 20],
      ['DB', 'failed', thisHour - HOUR_MS + 30],
      ['DB_SHARD_2', 'failed', thisHour - HOUR_MS + 40],
      ['DB_SHARD_1', 'pending', thisHour],
    ];
    for (const [shard, status, createdAt] of added) {
      await insertShardDelivery(shard, {
        eventId: events[shard],
        subscriptionId: `sub_test_${crypto.randomUUID()}`,
        status,
        createdAt,
      });
    }
    const after = (await getData<{ hours: Hour[] }>('/admin/deliveries/hourly?hours=3')).hours;
    return { before, after };
  }

  it('should sum every shard hour by hour', async () => {
    let chart = await addToChart();
    // The clock crossed an hour between the two reads: the charts cover other hours.
    if (chart.after[0]?.hour !== chart.before[0]?.hour) chart = await addToChart();
    const { before, after } = chart;
    expect(after).toEqual(
      before.map((hour, index) => ({
        hour: hour.hour,
        delivered: hour.delivered + (ADDED[index]?.delivered ?? 0),
        pending: hour.pending + (ADDED[index]?.pending ?? 0),
        failed: hour.failed + (ADDED[index]?.failed ?? 0),
      })),
    );
  });
});
