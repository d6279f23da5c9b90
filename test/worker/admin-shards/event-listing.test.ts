/**
 * `GET /admin/events` over three event shards (D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2),
 * through the real Worker and real D1: each shard gives one page after the same cursor and
 * the newest of them make the page, so a walk with a small page size lists every event of
 * the three databases once, newest first, whatever arrives between pages; the filters apply
 * in every shard.
 */
import { describe, expect, it } from 'vitest';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf, type EventSummary } from '../routes/admin/admin-helpers.ts';
import { eventIdIn, SHARDS, THREE_SHARDS } from '../shard-databases.ts';
import {
  expectEveryShard,
  newestFirst,
  type ShardedEvent,
  storeShardedEvent,
} from './sharded-events.ts';

useCapturedLogs();

/** An hour ago: events are stored before it, so one received now is newer than all of them. */
const T0 = Date.now() - 3_600_000;
/** Most pages a walk reads: far more than any test stores. */
const MAX_PAGES = 50;

interface Page {
  data: EventSummary[];
  next_cursor: string | null;
}

async function listPage(query: Record<string, string>): Promise<Page> {
  const res = await fetchGateway(
    adminRequest('GET', `/admin/events?${new URLSearchParams(query)}`),
    THREE_SHARDS,
  );
  expect(res.status).toBe(200);
  const json = (await res.json()) as Page & { status: string };
  expect(json.status).toBe('success');
  return json;
}

/** Stores `count` events of `type` in each shard, received at times that interleave them. */
async function storeSpread(type: string, count: number): Promise<ShardedEvent[]> {
  const stored: ShardedEvent[] = [];
  for (let index = 0; index < count; index += 1) {
    for (const [position, shard] of SHARDS.entries()) {
      // Every third event shares its millisecond with one of another shard: ties by id.
      const receivedAt = T0 - index * 1000 - (index % 3 === 0 ? 0 : position * 10);
      const eventId = await eventIdIn(shard);
      stored.push(await storeShardedEvent(type, { eventId, receivedAt }));
    }
  }
  return stored;
}

describe('GET /admin/events over three shards', () => {
  it('should walk every event of every shard once, newest first, while new events arrive', async () => {
    const type = `walk_${crypto.randomUUID()}`;
    const stored = await storeSpread(type, 4);
    expectEveryShard(stored);
    const seen: string[] = [];
    const sizes: number[] = [];
    const arrived: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const answer: Page = await listPage({
        event_type: type,
        page_size: '5',
        ...(cursor === null ? {} : { cursor }),
      });
      seen.push(...answer.data.map((event) => event.event_id));
      sizes.push(answer.data.length);
      cursor = answer.next_cursor;
      if (cursor === null) break;
      // A new event between two pages is newer than the cursor: no later page shows it.
      const eventId = await eventIdIn(SHARDS[(page + 1) % 3] ?? 'DB');
      arrived.unshift((await storeShardedEvent(type, { eventId })).eventId);
    }
    expect(seen).toEqual(newestFirst(stored).map((event) => event.eventId));
    expect(sizes).toEqual([5, 5, 2]);
    // The new events (in DB_SHARD_1 and DB_SHARD_2) are on a new first page, newest first.
    const first = await listPage({ event_type: type, page_size: '5' });
    expect(arrived).toHaveLength(2);
    expect(new Set(first.data.slice(0, 2).map((event) => event.event_id))).toEqual(
      new Set(arrived),
    );
  });

  it('should answer the last page without a cursor when it ends exactly at the page size', async () => {
    const type = `exact_${crypto.randomUUID()}`;
    const stored = await storeSpread(type, 2);
    const first = await listPage({ event_type: type, page_size: '3' });
    const second = await listPage({
      event_type: type,
      page_size: '3',
      cursor: first.next_cursor ?? '',
    });
    expect([...first.data, ...second.data].map((event) => event.event_id)).toEqual(
      newestFirst(stored).map((event) => event.eventId),
    );
    expect(second.next_cursor).toBeNull();
  });

  it('should apply status, reference, prefixes and the time range in every shard', async () => {
    const type = `filters_${crypto.randomUUID()}`;
    const reference = `ref_${crypto.randomUUID()}`;
    const prefix = `evt_${crypto.randomUUID().slice(0, 8)}_`;
    const stored: (ShardedEvent & { status: string; reference: string })[] = [];
    for (const [index, shard] of [...SHARDS, ...SHARDS].entries()) {
      const status = index % 2 === 0 ? 'unconfirmed' : 'received';
      const ref = index < 3 ? `${reference}_a` : `${reference}_b`;
      const eventId = await eventIdIn(shard, index % 3 === 0 ? 'evt_' : prefix);
      const event = await storeShardedEvent(type, {
        eventId,
        status,
        receivedAt: T0 - index * 60_000,
        data: { reference: ref, amount: 100, currency: 'NGN', metadata: null },
      });
      stored.push({ ...event, status, reference: ref });
    }
    const expectIds = async (
      query: Record<string, string>,
      keep: (event: (typeof stored)[number]) => boolean,
    ) => {
      const page = await listPage({ event_type: type, page_size: '100', ...query });
      const expected = newestFirst(stored.filter(keep));
      expect(expected.length).toBeGreaterThan(0);
      expect(new Set(expected.map((event) => event.shard)).size).toBeGreaterThan(1);
      expect(page.data.map((event) => event.event_id)).toEqual(expected.map((e) => e.eventId));
    };
    await expectIds({}, () => true);
    await expectIds({ status: 'unconfirmed' }, (event) => event.status === 'unconfirmed');
    await expectIds({ reference: `${reference}_b` }, (event) => event.reference.endsWith('_b'));
    await expectIds({ reference_prefix: reference }, () => true);
    await expectIds({ event_id_prefix: prefix }, (event) => event.eventId.startsWith(prefix));
    await expectIds(
      {
        from: new Date(T0 - 4 * 60_000).toISOString(),
        to: new Date(T0 - 60_000 + 1).toISOString(),
      },
      (event) => event.receivedAt >= T0 - 4 * 60_000 && event.receivedAt <= T0 - 60_000,
    );
  });
});

describe('GET /admin/events/:id over three shards', () => {
  it('should find an event in whichever shard holds it', async () => {
    const type = `find_${crypto.randomUUID()}`;
    for (const shard of SHARDS) {
      const stored = await storeShardedEvent(type, { eventId: await eventIdIn(shard) });
      const res = await fetchGateway(
        adminRequest('GET', `/admin/events/${stored.eventId}`),
        THREE_SHARDS,
      );
      expect(res.status).toBe(200);
      expect((await dataOf<EventSummary>(res)).event_id).toBe(stored.eventId);
    }
  });
});
