/**
 * The admin API's event routes (`/admin/events`) through the real Worker,
 * D1 and DELIVERIES queue: listing with filters and keyset pagination, one event with
 * its deliveries and attempts, replay. `DELIVERIES` is wrapped so its `sendBatch` calls
 * are recorded while still reaching the real queue (whose consumer then runs).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../../worker/db/deliveries.ts';
import {
  listDeliveryAttempts,
  recordDeliveryAttempt,
} from '../../../../worker/db/delivery-attempts.ts';
import type { WebhookEventStatus } from '../../../../worker/db/webhook-events.ts';
import { errorBody, fetchGateway, gatewayRequest, useCapturedLogs } from '../../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  storeEvent,
} from '../../relay/delivery-helpers.ts';
import { adminRequest, dataOf, type EventSummary } from './admin-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

interface EventDetail extends EventSummary {
  body: Record<string, unknown>;
  raw_body: string;
  deliveries: {
    id: string;
    subscription_id: string;
    status: string;
    attempts: number;
    attempt_log: { attempt: number; status: number | null; error: string | null }[];
  }[];
}

/** The real DELIVERIES producer, with every message id sent recorded. */
function recordedDeliveries(): { queue: Queue; sent: string[] } {
  const sent: string[] = [];
  const real = env.DELIVERIES;
  const queue: Queue = {
    metrics: () => real.metrics(),
    send: async (body, options) => {
      sent.push((body as { deliveryId: string }).deliveryId);
      return real.send(body, options);
    },
    sendBatch: async (messages, options) => {
      for (const m of messages) sent.push((m.body as { deliveryId: string }).deliveryId);
      return real.sendBatch(messages, options);
    },
  };
  return { queue, sent };
}

/** Stores an event of `eventType` received at `receivedAt` (ms), with its fan-out. */
async function storeEventAt(
  eventType: string,
  receivedAt: number,
  status: WebhookEventStatus = 'received',
  eventId = `evt_${crypto.randomUUID()}`,
): Promise<string> {
  await storeEvent(eventType, { receivedAt, status, eventId });
  return eventId;
}

async function list(query: string): Promise<Response> {
  return fetchGateway(adminRequest('GET', `/admin/events?${query}`));
}

async function listPage(query: string) {
  const res = await list(query);
  const json = (await res.json()) as { data: EventSummary[]; next_cursor: string | null };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

function replay(eventId: string, json?: unknown, overrides: Partial<Env> = {}) {
  return fetchGateway(
    adminRequest('POST', `/admin/events/${encodeURIComponent(eventId)}/replay`, {
      ...(json === undefined ? {} : { json }),
    }),
    overrides,
  );
}

const T0 = Date.parse('2026-01-10T00:00:00.000Z');

describe('admin events API', () => {
  describe('GET /admin/events', () => {
    it('should list newest first and page with next_cursor until the last page', async () => {
      const type = `list_${crypto.randomUUID()}`;
      const a = await storeEventAt(type, T0);
      const b = await storeEventAt(type, T0 + 1000);
      const c = await storeEventAt(type, T0 + 1000);
      const d = await storeEventAt(type, T0 + 2000);
      const sameTime = [b, c].sort().reverse();
      const first = await listPage(`event_type=${type}&page_size=2`);
      expect(first.data.map((e) => e.event_id)).toEqual([d, sameTime[0]]);
      expect(first.data[0]).toEqual({
        event_id: d,
        event_type: type,
        status: 'received',
        outcome: 'no_subscriber',
        received_at: '2026-01-10T00:00:02.000Z',
        reference: 'pay_1',
        amount: null,
        currency: null,
      });
      expect(first.next_cursor).toEqual(expect.any(String));
      const second = await listPage(
        `event_type=${type}&page_size=2&cursor=${first.next_cursor ?? ''}`,
      );
      expect(second.data.map((e) => e.event_id)).toEqual([sameTime[1], a]);
      expect(second.next_cursor).toBeNull();
    });

    it('should default to 10 per page', async () => {
      const type = `default_${crypto.randomUUID()}`;
      for (let i = 0; i < 11; i++) await storeEventAt(type, T0 + i);
      const page = await listPage(`event_type=${type}`);
      expect(page.data).toHaveLength(10);
      expect(page.next_cursor).not.toBeNull();
    });

    it('should filter by status', async () => {
      const type = `status_${crypto.randomUUID()}`;
      await storeEventAt(type, T0);
      const unconfirmed = await storeEventAt(type, T0 + 1, 'unconfirmed');
      const page = await listPage(`event_type=${type}&status=unconfirmed`);
      expect(page.data.map((e) => e.event_id)).toEqual([unconfirmed]);
    });

    it('should filter on received_at with from inclusive and to exclusive', async () => {
      const type = `range_${crypto.randomUUID()}`;
      await storeEventAt(type, T0 - 1);
      const inside = await storeEventAt(type, T0);
      await storeEventAt(type, T0 + 60_000);
      const page = await listPage(
        `event_type=${type}&from=2026-01-10T00:00:00Z&to=2026-01-10T00:01:00Z`,
      );
      expect(page.data.map((e) => e.event_id)).toEqual([inside]);
    });

    it.each([
      ['page_size=0', 'page_size'],
      ['page_size=101', 'page_size'],
      ['page_size=ten', 'page_size'],
      ['status=bogus', 'status'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01T00:00:00Z', 'to'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['cursor=!!', 'cursor'],
      [`cursor=${btoa('not-a-cursor')}`, 'cursor'],
      ['event_type=', 'event_type'],
      ['type=charge_success', 'type'],
      ['status=received&status=confirmed', 'status'],
    ])('should refuse %s with 400 validation_failed at %s', async (query, path) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.code).toBe('validation_failed');
      expect(body.issues?.map((i) => i.path)).toContain(path);
    });

    it('should refuse a request without the admin token', async () => {
      const res = await fetchGateway(gatewayRequest('/admin/events', { token: null }));
      expect(res.status).toBe(401);
    });
  });

  describe('GET /admin/events/:id', () => {
    it('should answer the event with its body, deliveries and attempts', async () => {
      const type = `detail_${crypto.randomUUID()}`;
      const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
      const eventId = await storeEventAt(type, T0);
      const [delivery] = await listEventDeliveries(env.DB, eventId);
      if (delivery === undefined) throw new Error('no delivery');
      await recordDeliveryAttempt(
        env.DB,
        delivery.id,
        {
          startedAt: T0,
          status: 503,
          latencyMs: 12,
          error: null,
          responseExcerpt: 'down',
          deliveryStatus: 'pending',
          nextAttemptAt: T0 + 5000,
        },
        T0,
      );
      const res = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
      expect(res.status).toBe(200);
      const data = await dataOf<EventDetail>(res);
      expect(data.event_id).toBe(eventId);
      expect(data.body).toEqual(JSON.parse(data.raw_body));
      expect(data.body.event_type).toBe(type);
      expect(data.deliveries).toEqual([
        expect.objectContaining({
          id: delivery.id,
          subscription_id: subscription.id,
          status: 'pending',
          attempts: 1,
          attempt_log: [
            {
              attempt: 1,
              started_at: new Date(T0).toISOString(),
              status: 503,
              latency_ms: 12,
              error: null,
              response_excerpt: 'down',
              trigger: 'schedule',
              operator: null,
            },
          ],
        }),
      ]);
    });

    it('should answer 404 not_found for an unknown event', async () => {
      const res = await fetchGateway(adminRequest('GET', '/admin/events/evt_missing'));
      expect(res.status).toBe(404);
      expect((await errorBody(res)).code).toBe('not_found');
    });
  });

  describe('POST /admin/events/:id/replay', () => {
    it('should reset existing deliveries, add new ones for matching subscriptions and enqueue them', async () => {
      const type = `replay_${crypto.randomUUID()}`;
      const early = await createReceiverSubscription({ eventTypes: [type] });
      const eventId = await storeEventAt(type, Date.now());
      const [existing] = await listEventDeliveries(env.DB, eventId);
      if (existing === undefined) throw new Error('no delivery');
      await env.DB.prepare(
        "UPDATE deliveries SET status = 'delivered', attempts = 1, next_attempt_at = NULL WHERE id = ?1",
      )
        .bind(existing.id)
        .run();
      const late = await createReceiverSubscription({ eventTypes: ['unrelated', type] });
      await createReceiverSubscription({ eventTypes: [type], enabled: false });
      await createReceiverSubscription({ eventTypes: ['other_type'] });
      const { queue, sent } = recordedDeliveries();

      const res = await replay(eventId, undefined, { DELIVERIES: queue });

      expect(res.status).toBe(202);
      const data = await dataOf<{ event_id: string; delivery_ids: string[] }>(res);
      const rows = await listEventDeliveries(env.DB, eventId);
      expect(rows.map((r) => r.subscriptionId).sort()).toEqual(
        [early.subscription.id, late.subscription.id].sort(),
      );
      expect(data.event_id).toBe(eventId);
      expect([...data.delivery_ids].sort()).toEqual(rows.map((r) => r.id).sort());
      expect(data.delivery_ids).toContain(existing.id);
      expect([...sent].sort()).toEqual([...data.delivery_ids].sort());
      const reset = rows.find((r) => r.id === existing.id);
      expect(reset?.attempts).toBe(1);
      // The test bindings refuse the loopback receiver: the consumer's recorded refusal
      // (attempt 2 of the reset delivery) shows the message reached the real queue.
      await expect
        .poll(async () => (await listDeliveryAttempts(env.DB, existing.id)).map((a) => a.attempt), {
          timeout: 5000,
          interval: 100,
        })
        .toEqual([2]);
    });

    it('should replay to the one subscription named, whatever its filter', async () => {
      const type = `replay_one_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [type] });
      const eventId = await storeEventAt(type, Date.now());
      const other = await createReceiverSubscription({ eventTypes: ['other_type'] });
      const { queue, sent } = recordedDeliveries();
      const res = await replay(
        eventId,
        { subscription_id: other.subscription.id },
        {
          DELIVERIES: queue,
        },
      );
      expect(res.status).toBe(202);
      const data = await dataOf<{ delivery_ids: string[] }>(res);
      const rows = await listEventDeliveries(env.DB, eventId);
      const created = rows.find((r) => r.subscriptionId === other.subscription.id);
      expect(data.delivery_ids).toEqual([created?.id]);
      expect(sent).toEqual(data.delivery_ids);
    });

    it('should refuse an unconfirmed event (409) unless forced, then record who forced it and when', async () => {
      const type = `unconfirmed_${crypto.randomUUID()}`;
      const eventId = await storeEventAt(type, Date.now(), 'unconfirmed');
      // Subscribed after ingress, as an unconfirmed event gets no delivery there.
      await createReceiverSubscription({ eventTypes: [type] });
      const { queue, sent } = recordedDeliveries();
      for (const json of [undefined, {}, { force: false }, { operator: 'ada' }]) {
        const refused = await replay(eventId, json, { DELIVERIES: queue });
        expect(refused.status, JSON.stringify(json)).toBe(409);
        const error = await errorBody(refused);
        expect(error.code).toBe('event_unconfirmed');
        expect(error.message).toContain('"force": true');
      }
      expect(sent).toEqual([]);
      expect(await listEventDeliveries(env.DB, eventId)).toEqual([]);
      const before = Date.now();
      const forced = await fetchGateway(
        adminRequest('POST', `/admin/events/${eventId}/replay`, {
          json: { force: true, operator: 'ada@ops' },
          headers: { 'CF-Connecting-IP': '203.0.113.7' },
        }),
        { DELIVERIES: queue },
      );
      expect(forced.status).toBe(202);
      const { data } = (await forced.json()) as { data: { delivery_ids: string[] } };
      expect(data.delivery_ids).toHaveLength(1);
      expect(sent).toEqual(data.delivery_ids);
      const detail = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
      const { forced_replay } = await dataOf<{ forced_replay: Record<string, string> }>(detail);
      expect(forced_replay).toMatchObject({ by: 'ada@ops', from: '203.0.113.7' });
      expect(Date.parse(forced_replay.at ?? '')).toBeGreaterThanOrEqual(before);
    });

    it('should keep every forced replay in an append-only history, oldest first', async () => {
      const type = `unconfirmed_${crypto.randomUUID()}`;
      const eventId = await storeEventAt(type, Date.now(), 'unconfirmed');
      await createReceiverSubscription({ eventTypes: [type] });
      const { queue } = recordedDeliveries();
      for (const [operator, address] of [
        ['ada@ops', '203.0.113.7'],
        ['bola@ops', '2001:db8::1'],
      ] as const) {
        const forced = await fetchGateway(
          adminRequest('POST', `/admin/events/${eventId}/replay`, {
            json: { force: true, operator },
            headers: { 'CF-Connecting-IP': address },
          }),
          { DELIVERIES: queue },
        );
        expect(forced.status).toBe(202);
      }
      const detail = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
      const data = await dataOf<{
        forced_replay: Record<string, string>;
        forced_replays: Array<Record<string, string>>;
      }>(detail);
      expect(data.forced_replays).toEqual([
        expect.objectContaining({ by: 'ada@ops', from: '203.0.113.7' }),
        expect.objectContaining({ by: 'bola@ops', from: '2001:db8::1' }),
      ]);
      expect(data.forced_replay).toEqual(data.forced_replays[1]);
      // The history cannot be rewritten, even by a query of the gateway's own.
      await expect(
        env.DB.prepare('UPDATE event_forced_replays SET forced_by = ?1 WHERE event_id = ?2')
          .bind('someone else', eventId)
          .run(),
      ).rejects.toThrow(/append-only/);
    });

    it('should show no forced replay on a confirmed event replayed normally', async () => {
      const eventId = await storeEventAt(`t_${crypto.randomUUID()}`, Date.now(), 'confirmed');
      expect((await replay(eventId, { force: true })).status).toBe(202);
      const detail = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
      expect(await dataOf(detail)).toMatchObject({ forced_replay: null });
    });

    it('should find an event whose id needs percent-encoding in the path', async () => {
      const eventId = `evt/${crypto.randomUUID()}?x=1#y%z`;
      await storeEventAt(`t_${crypto.randomUUID()}`, Date.now(), 'received', eventId);
      const path = `/admin/events/${encodeURIComponent(eventId)}`;
      const detail = await fetchGateway(adminRequest('GET', path));
      expect(detail.status).toBe(200);
      expect(await dataOf(detail)).toMatchObject({ event_id: eventId });
      expect((await fetchGateway(adminRequest('POST', `${path}/replay`))).status).toBe(202);
    });

    it('should answer 400 for a malformed escape in the event id', async () => {
      const res = await fetchGateway(adminRequest('GET', '/admin/events/evt%E0%A4'));
      expect(res.status).toBe(400);
      expect((await errorBody(res)).issues).toEqual([
        { path: 'id', message: 'Malformed percent-encoding' },
      ]);
    });

    it('should answer 404 not_found for an unknown event', async () => {
      const { queue, sent } = recordedDeliveries();
      const res = await replay('evt_missing', undefined, { DELIVERIES: queue });
      expect(res.status).toBe(404);
      expect((await errorBody(res)).code).toBe('not_found');
      expect(sent).toEqual([]);
    });

    it('should answer 404 not_found for an unknown subscription', async () => {
      const eventId = await storeEventAt(`t_${crypto.randomUUID()}`, Date.now());
      const res = await replay(eventId, { subscription_id: 'sub_missing' });
      expect(res.status).toBe(404);
      expect((await errorBody(res)).message).toContain('sub_missing');
    });

    it('should refuse a disabled subscription with 409 subscription_disabled', async () => {
      const eventId = await storeEventAt(`t_${crypto.randomUUID()}`, Date.now());
      const off = await createReceiverSubscription({ enabled: false });
      const { queue, sent } = recordedDeliveries();
      const res = await replay(
        eventId,
        { subscription_id: off.subscription.id },
        {
          DELIVERIES: queue,
        },
      );
      expect(res.status).toBe(409);
      expect(await errorBody(res)).toMatchObject({
        code: 'subscription_disabled',
        message: expect.stringContaining('is disabled (created disabled'),
      });
      expect(sent).toEqual([]);
    });

    it.each([
      [{ subscription_id: 5 }, 'subscription_id'],
      [{ subscription: 'sub_x' }, 'subscription'],
      [[], ''],
    ])('should refuse the body %j with 400 at %s', async (json, path) => {
      const eventId = await storeEventAt(`t_${crypto.randomUUID()}`, Date.now());
      const res = await replay(eventId, json);
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.code).toBe('validation_failed');
      expect(body.issues?.map((i) => i.path)).toContain(path);
    });
  });
});
