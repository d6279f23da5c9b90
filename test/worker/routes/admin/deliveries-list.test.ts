/**
 * The admin API's delivery listing and hourly chart (`GET /admin/deliveries`,
 * `GET /admin/deliveries/hourly`) through the real Worker and D1. D1 is shared with the
 * other test files, so each listing test filters on an event or subscription of its own,
 * and the hourly tests count rows in an hour long past, which no other test writes.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../../../worker/db/admin-deliveries.ts';
import type { DeliveryStatus } from '../../../../worker/db/deliveries.ts';
import type { DeliveryView } from '../../../../worker/routes/admin/deliveries.ts';
import { errorBody, fetchGateway, gatewayRequest, useCapturedLogs } from '../../helpers.ts';
import { insertDeliveries, storeEvent } from '../../relay/delivery-helpers.ts';
import { adminRequest, dataOf, expectValidationFailed } from './admin-helpers.ts';

useCapturedLogs();

type ListedDelivery = DeliveryView & { event_type: string };

interface DeliveryPage {
  data: ListedDelivery[];
  next_cursor: string | null;
}

interface HourBucket {
  hour: string;
  delivered: number;
  pending: number;
  failed: number;
}

const T0 = Date.parse('2026-02-01T12:00:00.000Z');

function get(path: string): Promise<Response> {
  return fetchGateway(adminRequest('GET', path));
}

async function listPage(query: string): Promise<DeliveryPage> {
  const res = await get(`/admin/deliveries?${query}`);
  const json = (await res.json()) as DeliveryPage & { status: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(json.status).toBe('success');
  return json;
}

/** Every page of `query`, following next_cursor to the end. */
async function listAll(query: string, pageSize: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page: DeliveryPage = await listPage(
      `${query}&page_size=${pageSize}${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    pages.push(page.data.map((d) => d.id));
    cursor = page.next_cursor;
  } while (cursor !== null && pages.length < 20);
  return pages;
}

/** An event of a fresh type (no subscription matches it) and its id. */
async function newEvent(): Promise<{ eventId: string; eventType: string }> {
  const eventType = `list_${crypto.randomUUID()}`;
  const { eventId } = await storeEvent(eventType);
  return { eventId, eventType };
}

/** `count` deliveries of one subscription, each of its own event, updated at `T0 + i` s. */
async function subscriptionDeliveries(
  count: number,
  status: (index: number) => DeliveryStatus = () => 'pending',
): Promise<{ subscriptionId: string; ids: string[] }> {
  const subscriptionId = `sub_test_${crypto.randomUUID()}`;
  const rows = [];
  for (let index = 0; index < count; index++) {
    const { eventId } = await newEvent();
    rows.push({
      eventId,
      subscriptionId,
      status: status(index),
      createdAt: T0,
      updatedAt: T0 + index * 1000,
    });
  }
  return { subscriptionId, ids: await insertDeliveries(rows) };
}

async function setUpdatedAt(ids: readonly (string | undefined)[], at: number): Promise<void> {
  await env.DB.prepare(
    'UPDATE deliveries SET updated_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))',
  )
    .bind(JSON.stringify(ids), at)
    .run();
}

describe('admin deliveries API: listing and hourly counts', () => {
  describe('GET /admin/deliveries', () => {
    it('should show each delivery with its event type, most recently updated first', async () => {
      const { eventId, eventType } = await newEvent();
      const subscriptionId = `sub_test_${crypto.randomUUID()}`;
      const [older, newer] = await insertDeliveries([
        { eventId, subscriptionId, status: 'failed', createdAt: T0, updatedAt: T0 + 5000 },
        { eventId, status: 'delivered', createdAt: T0, updatedAt: T0 + 9000 },
      ]);
      const page = await listPage(`event_id=${eventId}`);
      expect(page.data.map((d) => d.id)).toEqual([newer, older]);
      expect(page.data[1]).toEqual({
        id: older,
        event_id: eventId,
        subscription_id: subscriptionId,
        status: 'failed',
        attempts: 0,
        next_attempt_at: null,
        last_status: null,
        created_at: '2026-02-01T12:00:00.000Z',
        updated_at: '2026-02-01T12:00:05.000Z',
        event_type: eventType,
      });
      expect(page.next_cursor).toBeNull();
    });

    it('should page through every delivery once, in order, ties by id descending', async () => {
      const { subscriptionId, ids } = await subscriptionDeliveries(7);
      // Two deliveries updated in the same millisecond: the id breaks the tie.
      const [third, fourth] = [ids[3], ids[4]];
      await setUpdatedAt([third, fourth], T0 + 3500);
      const tie = [third, fourth].sort().reverse();
      const expected = [ids[6], ids[5], ...tie, ids[2], ids[1], ids[0]];
      const pages = await listAll(`subscription_id=${subscriptionId}`, 3);
      expect(pages).toEqual([expected.slice(0, 3), expected.slice(3, 6), expected.slice(6)]);
      expect(new Set(pages.flat()).size).toBe(7);
    });

    it('should filter by status, together with the subscription', async () => {
      const statuses: DeliveryStatus[] = ['pending', 'failed', 'delivered', 'failed'];
      const { subscriptionId, ids } = await subscriptionDeliveries(
        4,
        (i) => statuses[i] ?? 'pending',
      );
      const failed = await listPage(`subscription_id=${subscriptionId}&status=failed`);
      expect(failed.data.map((d) => d.id)).toEqual([ids[3], ids[1]]);
      expect(failed.data.every((d) => d.status === 'failed')).toBe(true);
      const delivered = await listPage(`status=delivered&subscription_id=${subscriptionId}`);
      expect(delivered.data.map((d) => d.id)).toEqual([ids[2]]);
    });

    it('should filter by event, and answer an empty page for an unknown one', async () => {
      const { eventId } = await newEvent();
      const ids = await insertDeliveries([
        { eventId, createdAt: T0, updatedAt: T0 + 1 },
        { eventId, createdAt: T0, updatedAt: T0 + 2 },
      ]);
      const page = await listPage(`event_id=${encodeURIComponent(eventId)}`);
      expect(page.data.map((d) => d.id)).toEqual([ids[1], ids[0]]);
      expect(await listPage('event_id=evt_never_stored')).toEqual({
        status: 'success',
        data: [],
        next_cursor: null,
      });
    });

    it('should answer 50 per page by default', async () => {
      const { eventId } = await newEvent();
      const ids = await insertDeliveries(
        Array.from({ length: 51 }, (_, i) => ({ eventId, createdAt: T0, updatedAt: T0 + i })),
      );
      const first = await listPage(`event_id=${eventId}`);
      expect(first.data).toHaveLength(50);
      expect(first.next_cursor).not.toBeNull();
      const second = await listPage(`event_id=${eventId}&cursor=${first.next_cursor}`);
      expect(second.data.map((d) => d.id)).toEqual([ids[0]]);
      expect(second.next_cursor).toBeNull();
    });

    it('should list without filters newest first', async () => {
      const page = await listPage('page_size=100');
      const keys = page.data.map((d) => [Date.parse(d.updated_at), d.id] as const);
      const sorted = [...keys].sort(([at1, id1], [at2, id2]) =>
        at1 === at2 ? (id1 < id2 ? 1 : -1) : at2 - at1,
      );
      expect(keys.length).toBeGreaterThan(0);
      expect(keys).toEqual(sorted);
    });

    it.each([
      ['status=bogus', 'status'],
      ['status=', 'status'],
      ['page_size=0', 'page_size'],
      ['page_size=101', 'page_size'],
      ['page_size=1.5', 'page_size'],
      ['page_size=-1', 'page_size'],
      ['cursor=!!', 'cursor'],
      [`cursor=${btoa('not-a-cursor')}`, 'cursor'],
      ['subscription_id=', 'subscription_id'],
      ['event_id=', 'event_id'],
      [`event_id=${'e'.repeat(256)}`, 'event_id'],
      ['type=charge_success', 'type'],
      ['status=failed&status=pending', 'status'],
    ])('should refuse %s with 400 validation_failed at %s', async (query, path) => {
      await expectValidationFailed(await get(`/admin/deliveries?${query}`), [path]);
    });
  });

  describe('GET /admin/deliveries/hourly', () => {
    async function hourly(query = ''): Promise<HourBucket[]> {
      const res = await get(`/admin/deliveries/hourly${query}`);
      expect(res.status).toBe(200);
      return (await dataOf<{ hours: HourBucket[] }>(res)).hours;
    }

    /** Checks the buckets are `count` consecutive hours ending with the current one. */
    function expectHours(buckets: HourBucket[], count: number, before: number, after: number) {
      expect(buckets).toHaveLength(count);
      const last = Date.parse(buckets.at(-1)?.hour ?? '');
      expect(last).toBeGreaterThanOrEqual(Math.floor(before / HOUR_MS) * HOUR_MS);
      expect(last).toBeLessThanOrEqual(Math.floor(after / HOUR_MS) * HOUR_MS);
      buckets.forEach((bucket, index) => {
        expect(bucket.hour).toBe(new Date(last - (count - 1 - index) * HOUR_MS).toISOString());
        expect(Object.keys(bucket)).toEqual(['hour', 'delivered', 'pending', 'failed']);
        for (const n of [bucket.delivered, bucket.pending, bucket.failed]) {
          expect(Number.isInteger(n) && n >= 0).toBe(true);
        }
      });
    }

    it('should answer 24 hours by default, oldest first, ending with the current hour', async () => {
      const before = Date.now();
      const buckets = await hourly();
      expectHours(buckets, 24, before, Date.now());
    });

    it.each([1, 2, 168])('should answer exactly %i hours', async (hours) => {
      const before = Date.now();
      const buckets = await hourly(`?hours=${hours}`);
      expectHours(buckets, hours, before, Date.now());
    });

    it('should count the deliveries created in each hour under their current status', async () => {
      const { eventId } = await newEvent();
      // Hours 150 and 152 before the current one: inside a week, written by no other test.
      const current = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      const busy = current - 150 * HOUR_MS;
      const quiet = current - 151 * HOUR_MS;
      const early = current - 152 * HOUR_MS;
      await insertDeliveries([
        { eventId, status: 'delivered', createdAt: busy + 1, updatedAt: current },
        { eventId, status: 'delivered', createdAt: busy + HOUR_MS - 1 },
        { eventId, status: 'failed', createdAt: busy + 30 * 60_000 },
        { eventId, status: 'pending', createdAt: early },
      ]);
      const buckets = await hourly('?hours=168');
      const at = (hour: number) => buckets.find((b) => b.hour === new Date(hour).toISOString());
      expect(at(busy)).toEqual({
        hour: new Date(busy).toISOString(),
        delivered: 2,
        pending: 0,
        failed: 1,
      });
      expect(at(quiet)).toMatchObject({ delivered: 0, pending: 0, failed: 0 });
      expect(at(early)).toMatchObject({ delivered: 0, pending: 1, failed: 0 });
    });

    it.each([
      ['?hours=0', 'hours'],
      ['?hours=169', 'hours'],
      ['?hours=1000', 'hours'],
      ['?hours=abc', 'hours'],
      ['?hours=', 'hours'],
      ['?hours=2.5', 'hours'],
      ['?hours=%2B3', 'hours'],
      ['?hours=24&hours=48', 'hours'],
      ['?hour=24', 'hour'],
    ])('should refuse %s with 400 validation_failed at %s', async (query, path) => {
      await expectValidationFailed(await get(`/admin/deliveries/hourly${query}`), [path]);
    });
  });

  describe.each(['/admin/deliveries', '/admin/deliveries/hourly'])('GET %s', (path) => {
    it('should refuse a request without the admin token', async () => {
      const res = await fetchGateway(gatewayRequest(path, { token: null }));
      expect(res.status).toBe(401);
      expect((await errorBody(res)).code).toBe('unauthorized');
    });

    it('should refuse a wrong admin token', async () => {
      const res = await fetchGateway(adminRequest('GET', path, { token: 'not-the-admin-token' }));
      expect(res.status).toBe(401);
      expect((await errorBody(res)).code).toBe('unauthorized');
    });
  });

  describe('routing', () => {
    it('should keep /counts and /hourly apart from each other and from the listing', async () => {
      const counts = await dataOf<Record<string, number>>(await get('/admin/deliveries/counts'));
      expect(Object.keys(counts).sort()).toEqual(['delivered', 'failed', 'pending', 'total']);
      const hours = await dataOf<Record<string, unknown>>(await get('/admin/deliveries/hourly'));
      expect(Object.keys(hours)).toEqual(['hours']);
      const list = await get('/admin/deliveries');
      expect(Array.isArray(((await list.json()) as { data: unknown }).data)).toBe(true);
    });

    it('should answer 405 for another method on the new paths', async () => {
      for (const path of ['/admin/deliveries', '/admin/deliveries/hourly']) {
        const res = await fetchGateway(adminRequest('POST', path));
        expect(res.status, path).toBe(405);
        expect(res.headers.get('Allow'), path).toContain('GET');
      }
    });
  });
});
