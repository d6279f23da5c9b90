/**
 * The delivery outcome of events (`outcome` in `GET /admin/events`, filter `outcome=`)
 * through the real Worker and D1: deliveries made by the ingress's fan-out, attempts recorded
 * and dead letters marked by the relay's own statements (as the consumer settles them), retries
 * through the admin API; each outcome, its precedence, keyset paging that holds while events
 * arrive, and the bounded reads of the filter (migrations/0012's index).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { resetDelivery } from '../../../../worker/db/admin-deliveries.ts';
import { listWebhookEvents } from '../../../../worker/db/admin-queries.ts';
import { markDeliveryFailed } from '../../../../worker/db/deliveries.ts';
import { recordDeliveryAttempt } from '../../../../worker/db/delivery-attempts.ts';
import { fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { ingest } from '../../relay/confirmation-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  storeEvent,
} from '../../relay/delivery-helpers.ts';
import { envelope } from '../webhook-helpers.ts';
import { adminRequest, dataOf, type EventSummary as Summary } from './admin-helpers.ts';

useCapturedLogs();

/** An event as the list shows it, with its delivery outcome. */
interface EventSummary extends Summary {
  outcome: string;
}
afterEach(disableTestSubscriptions);

interface EventPage {
  data: EventSummary[];
  next_cursor: string | null;
}

async function listPage(query: string): Promise<EventPage> {
  const res = await fetchGateway(adminRequest('GET', `/admin/events?${query}`));
  const json = (await res.json()) as EventPage;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

/** The outcome the list shows for one event (found by its own type). */
async function outcomeOf(eventType: string): Promise<string | undefined> {
  return (await listPage(`event_type=${eventType}`)).data[0]?.outcome;
}

/** An event of a fresh type fanned out to `subscribers` new subscriptions. */
async function eventFor(subscribers: number) {
  const type = `outcome_${crypto.randomUUID()}`;
  for (let i = 0; i < subscribers; i++) await createReceiverSubscription({ eventTypes: [type] });
  const stored = await storeEvent(type);
  expect(stored.deliveryIds).toHaveLength(subscribers);
  return { type, ...stored };
}

/**
 * One attempt of each delivery answered `status`, recorded as the consumer records it: a 2xx
 * delivers, anything else stays pending with a next attempt.
 */
async function attempt(deliveryIds: readonly string[], status: number | null): Promise<void> {
  const now = Date.now();
  const ok = status !== null && status >= 200 && status < 300;
  for (const id of deliveryIds) {
    await recordDeliveryAttempt(
      env.DB,
      id,
      {
        startedAt: now,
        status,
        latencyMs: 3,
        error: status === null ? 'timeout' : null,
        responseExcerpt: null,
        deliveryStatus: ok ? 'delivered' : 'pending',
        nextAttemptAt: ok ? null : now + 5000,
      },
      now,
    );
  }
}

describe('admin events API: delivery outcome', () => {
  describe('GET /admin/events outcome', () => {
    it('should say no_subscriber for an event no subscription matched', async () => {
      const { type } = await eventFor(0);
      expect(await outcomeOf(type)).toBe('no_subscriber');
    });

    it('should say pending before the first attempt, then delivered after a 2xx', async () => {
      const { type, deliveryIds } = await eventFor(1);
      expect(await outcomeOf(type)).toBe('pending');
      await attempt(deliveryIds, 204);
      expect(await outcomeOf(type)).toBe('delivered');
    });

    it('should say failing after a failed attempt that will be retried', async () => {
      const { type, deliveryIds } = await eventFor(1);
      await attempt(deliveryIds, 500);
      expect(await outcomeOf(type)).toBe('failing');
      await attempt(deliveryIds, null);
      expect(await outcomeOf(type)).toBe('failing');
    });

    it('should say failed when a delivery is dead-lettered', async () => {
      const { type, deliveryIds } = await eventFor(1);
      await attempt(deliveryIds, 500);
      expect(await markDeliveryFailed(env.DB, deliveryIds[0] ?? '', Date.now())).toBe(true);
      expect(await outcomeOf(type)).toBe('failed');
    });

    it('should rank failed over failing over pending over delivered', async () => {
      const { type, deliveryIds } = await eventFor(3);
      const [ok, flaky, gone] = deliveryIds as [string, string, string];
      await attempt([ok], 200);
      expect(await outcomeOf(type)).toBe('pending');
      await attempt([flaky], 503);
      expect(await outcomeOf(type)).toBe('failing');
      await attempt([gone], 410);
      await markDeliveryFailed(env.DB, gone, Date.now());
      expect(await outcomeOf(type)).toBe('failed');
    });

    it('should say failing when a failed delivery is retried, pending when a delivered one is', async () => {
      const { type, deliveryIds, eventId } = await eventFor(1);
      const [id] = deliveryIds as [string];
      await attempt(deliveryIds, 500);
      await markDeliveryFailed(env.DB, id, Date.now());
      expect(await outcomeOf(type)).toBe('failed');
      // The retry's reset (the admin route's statement; its enqueue would race the assertions).
      await resetDelivery(env.DB, id, Date.now());
      expect(await outcomeOf(type)).toBe('failing');
      const detail = await dataOf<EventSummary>(
        await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`)),
      );
      expect(detail.outcome).toBe('failing');
      await attempt(deliveryIds, 200);
      expect(await outcomeOf(type)).toBe('delivered');
      await resetDelivery(env.DB, id, Date.now());
      expect(await outcomeOf(type)).toBe('pending');
    });

    it('should say held while a money event awaits confirmation, no_subscriber once confirmed', async () => {
      const body = JSON.stringify(
        envelope({
          data: { reference: `missing_${crypto.randomUUID()}`, amount: 10, currency: 'NGN' },
        }),
      );
      const eventId = JSON.parse(body).event_id as string;
      expect((await ingest(body)).res.status).toBe(200);
      const [held] = (await listPage(`event_id_prefix=${eventId}`)).data;
      expect(held).toMatchObject({ status: 'awaiting_confirmation', outcome: 'held' });
      await env.DB.prepare(`UPDATE webhook_events SET status = 'unconfirmed' WHERE event_id = ?1`)
        .bind(eventId)
        .run();
      expect((await listPage(`event_id_prefix=${eventId}`)).data[0]?.outcome).toBe('held');
      await env.DB.prepare(`UPDATE webhook_events SET status = 'confirmed' WHERE event_id = ?1`)
        .bind(eventId)
        .run();
      expect((await listPage(`event_id_prefix=${eventId}`)).data[0]?.outcome).toBe('no_subscriber');
    });
  });

  describe('GET /admin/events?outcome=', () => {
    it('should list only events of that outcome, newest first, paging stably while events arrive', async () => {
      const type = `outcome_page_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [type] });
      const T0 = Date.parse('2026-04-01T00:00:00.000Z');
      const failing: string[] = [];
      for (let i = 0; i < 5; i++) {
        const stored = await storeEvent(type, { receivedAt: T0 + i * 1000 });
        await attempt(stored.deliveryIds, 500);
        failing.unshift(stored.eventId);
      }
      // A pending one among them: not listed.
      await storeEvent(type, { receivedAt: T0 + 2500 });

      const first = await listPage(`event_type=${type}&outcome=failing&page_size=2`);
      expect(first.data.map((e) => e.event_id)).toEqual(failing.slice(0, 2));
      // Newer failing events arrive between pages: the next page is unchanged.
      for (let i = 0; i < 2; i++) {
        await attempt((await storeEvent(type, { receivedAt: T0 + 10_000 + i })).deliveryIds, 500);
      }
      const rest: string[] = [];
      let cursor = first.next_cursor;
      for (let page = 0; cursor !== null && page < 5; page++) {
        const next = await listPage(
          `event_type=${type}&outcome=failing&page_size=2&cursor=${cursor}`,
        );
        rest.push(...next.data.map((e) => e.event_id));
        cursor = next.next_cursor;
      }
      expect(rest).toEqual(failing.slice(2));
      expect((await listPage(`event_type=${type}&outcome=pending`)).data).toHaveLength(1);
    });

    it('should refuse an unknown outcome with 400 validation_failed', async () => {
      const res = await fetchGateway(adminRequest('GET', '/admin/events?outcome=lost'));
      expect(res.status).toBe(400);
      const body = (await res.json()) as {
        code: string;
        issues: { path: string; message: string }[];
      };
      expect(body.code).toBe('validation_failed');
      expect(body.issues.map((i) => i.path)).toEqual(['outcome']);
      expect(body.issues[0]?.message).toContain('"no_subscriber"');
    });

    it('should read about one page of rows however many events have another outcome', async () => {
      // Later than every other event of this file, so the failed one is the newest failed.
      const T0 = Date.parse('2030-06-01T00:00:00.000Z');
      const type = `outcome_reads_${crypto.randomUUID()}`;
      const failed = await storeEvent(type, { receivedAt: T0 });
      await env.DB.prepare(`UPDATE webhook_events SET outcome = 'failed' WHERE event_id = ?1`)
        .bind(failed.eventId)
        .run();
      // 300 newer events without a subscriber: a filter checking each event's deliveries
      // would look at every one of them before reaching the failed one.
      await env.DB.batch(Array.from({ length: 300 }, (_, i) => insertStatement(type, T0 + 1 + i)));
      const reads: number[] = [];
      const page = await listWebhookEvents(recordingReads(reads), {
        ...NO_FILTER,
        outcome: 'failed',
      });
      expect(page.events.map((e) => e.eventId)).toContain(failed.eventId);
      expect(reads).toHaveLength(1);
      expect(reads[0]).toBeLessThanOrEqual(2 * (NO_FILTER.pageSize + 1));
    });
  });
});

describe('migration 0012 backfill', () => {
  it('should set the outcome of events stored before it from their deliveries and status', async () => {
    const statement = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0012_'))?.queries.find(
      (q) => !/CREATE\s+TRIGGER/i.test(q) && /UPDATE\s+webhook_events/i.test(q),
    );
    if (statement === undefined) throw new Error('no backfill statement in migration 0012');
    const type = `backfill_${crypto.randomUUID()}`;
    const cases: Array<[expected: string, status: string, deliveries: string[]]> = [
      ['failed', 'received', ['delivered', 'failed', 'failing']],
      ['failing', 'confirmed', ['delivered', 'failing', 'pending']],
      ['pending', 'received', ['delivered', 'pending']],
      ['delivered', 'received', ['delivered', 'delivered']],
      ['held', 'awaiting_confirmation', []],
      ['held', 'unconfirmed', []],
      ['no_subscriber', 'received', []],
    ];
    const ids = cases.map(() => `evt_backfill_${crypto.randomUUID()}`);
    await env.DB.batch(
      cases.flatMap(([, status, deliveries], i) => [
        env.DB.prepare(
          `INSERT INTO webhook_events (event_id, event_type, status, received_at, raw_body)
           VALUES (?1, ?2, ?3, 1, '{}')`,
        ).bind(ids[i], type, status),
        ...deliveries.map((kind, j) =>
          env.DB.prepare(
            `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, last_status,
               created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 1)`,
          ).bind(
            `dlv_backfill_${i}_${j}_${crypto.randomUUID()}`,
            ids[i],
            `sub_${j}`,
            kind === 'failing' ? 'pending' : kind,
            kind === 'pending' ? 0 : 1,
            kind === 'failing' ? 503 : kind === 'pending' ? null : 200,
          ),
        ),
      ]),
    );
    // As if the column had just been added: every row at its default.
    await env.DB.prepare(
      `UPDATE webhook_events SET outcome = 'no_subscriber' WHERE event_type = ?1`,
    )
      .bind(type)
      .run();
    await env.DB.prepare(statement).run();
    const { results } = await env.DB.prepare(
      'SELECT event_id, outcome FROM webhook_events WHERE event_type = ?1',
    )
      .bind(type)
      .all<{ event_id: string; outcome: string }>();
    const byId = new Map(results.map((row) => [row.event_id, row.outcome]));
    expect(ids.map((id) => byId.get(id))).toEqual(cases.map(([expected]) => expected));
  });
});

const NO_FILTER = {
  eventType: null,
  status: null,
  outcome: null,
  reference: null,
  referencePrefix: null,
  eventIdPrefix: null,
  from: null,
  to: null,
  after: null,
  pageSize: 10,
  bodyTypes: [],
} as const;

function insertStatement(type: string, receivedAt: number): D1PreparedStatement {
  return env.DB.prepare(
    `INSERT INTO webhook_events (event_id, event_type, status, received_at, raw_body)
     VALUES (?1, ?2, 'received', ?3, '{}')`,
  ).bind(`evt_reads_${crypto.randomUUID()}`, type, receivedAt);
}

/** The D1 binding, recording the `rows_read` of every `all()`. */
function recordingReads(reads: number[]): D1Database {
  return {
    prepare: (sql: string) => {
      const statement = env.DB.prepare(sql);
      return {
        bind: (...values: unknown[]) => {
          const bound = statement.bind(...values);
          return {
            all: async () => {
              const result = await bound.all();
              reads.push(result.meta.rows_read);
              return result;
            },
          };
        },
      };
    },
  } as unknown as D1Database;
}
