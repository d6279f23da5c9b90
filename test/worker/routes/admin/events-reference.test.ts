/**
 * Finding events by payment reference (`GET /admin/events?reference=`) through the real
 * Worker and D1: the ingress stores `data.reference`, the listing matches it exactly,
 * with the other filters and keyset paging, and migrations/0006's backfill fills it in
 * for events stored before the column existed. Each test uses references of its own.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { WebhookEventStatus } from '../../../../worker/db/webhook-events.ts';
import { findWebhookEvent } from '../../../../worker/db/webhook-events.ts';
import { fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { storeEvent } from '../../relay/delivery-helpers.ts';
import { envelope, webhookRequest } from '../webhook-helpers.ts';
import {
  adminRequest,
  dataOf,
  type EventSummary,
  expectValidationFailed,
} from './admin-helpers.ts';

useCapturedLogs();

interface EventPage {
  data: EventSummary[];
  next_cursor: string | null;
}

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

function newReference(): string {
  return `ref_${crypto.randomUUID()}`;
}

/** Stores an event whose `data.reference` is `reference`, received at `receivedAt`. */
async function storeWithReference(
  reference: unknown,
  receivedAt: number,
  eventType = 'charge_success',
  status: WebhookEventStatus = 'received',
): Promise<string> {
  const data = { reference, amount: 5000, currency: 'NGN' };
  return (await storeEvent(eventType, { receivedAt, status, data })).eventId;
}

async function list(query: string): Promise<Response> {
  return fetchGateway(adminRequest('GET', `/admin/events?${query}`));
}

async function listPage(query: string): Promise<EventPage> {
  const res = await list(query);
  const json = (await res.json()) as EventPage;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

/** The migration statement that fills `reference` in for rows stored before it. */
function backfillStatement(): string {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith('0006_'));
  const statement = migration?.queries.find((q) => /UPDATE\s+webhook_events/i.test(q));
  if (statement === undefined) throw new Error('no backfill statement in migration 0006');
  return statement;
}

describe('admin events API: reference', () => {
  describe('POST /webhooks', () => {
    it("should store the event's data.reference, shown by the listing and the detail", async () => {
      const reference = newReference();
      const body = JSON.stringify(envelope({ data: { reference, amount: 100 } }));
      const eventId = JSON.parse(body).event_id as string;
      expect((await fetchGateway(await webhookRequest(body))).status).toBe(200);

      expect((await findWebhookEvent(env.DB, eventId))?.reference).toBe(reference);
      const page = await listPage(`reference=${reference}`);
      expect(page.data).toEqual([
        expect.objectContaining({ event_id: eventId, reference, event_type: 'charge_success' }),
      ]);
      const detail = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
      expect(await dataOf(detail)).toMatchObject({ event_id: eventId, reference });
    });

    it.each([
      ['a number', { reference: 12345 }],
      ['an object', { reference: { id: 'x' } }],
      ['absent', { amount: 1 }],
    ])('should store no reference when data.reference is %s', async (_, data) => {
      const body = JSON.stringify(envelope({ data }));
      const eventId = JSON.parse(body).event_id as string;
      expect((await fetchGateway(await webhookRequest(body))).status).toBe(200);
      expect((await findWebhookEvent(env.DB, eventId))?.reference).toBeNull();
    });
  });

  describe('GET /admin/events?reference=', () => {
    it('should list only the events of that exact reference, newest first', async () => {
      const reference = newReference();
      const a = await storeWithReference(reference, T0, 'charge_success');
      const b = await storeWithReference(reference, T0 + 2000, 'refund_processed');
      await storeWithReference(newReference(), T0 + 1000);
      // Exact: neither another case, a prefix, nor surrounding spaces match.
      await storeWithReference(reference.toUpperCase(), T0 + 1000);
      await storeWithReference(`${reference}_2`, T0 + 1000);
      await storeWithReference(` ${reference}`, T0 + 1000);
      const page = await listPage(`reference=${reference}`);
      expect(page.data).toEqual([
        {
          event_id: b,
          event_type: 'refund_processed',
          status: 'received',
          outcome: 'no_subscriber',
          received_at: '2026-03-01T00:00:02.000Z',
          reference,
          amount: null,
          currency: null,
        },
        expect.objectContaining({ event_id: a, reference }),
      ]);
      expect(page.next_cursor).toBeNull();
    });

    it('should combine with event_type and status and page without gaps or repeats', async () => {
      const reference = newReference();
      const type = `ref_type_${crypto.randomUUID()}`;
      const wanted = [];
      for (let i = 0; i < 5; i++) wanted.push(await storeWithReference(reference, T0 + i, type));
      // One more in the same millisecond as the newest: ordered by event_id, descending.
      wanted.push(await storeWithReference(reference, T0 + 4, type));
      await storeWithReference(reference, T0 + 10, type, 'unconfirmed');
      await storeWithReference(reference, T0 + 11, 'charge_success');
      await storeWithReference(newReference(), T0 + 12, type);
      const [newest, tied] = [wanted[4], wanted[5]] as [string, string];
      const expected = [...[newest, tied].sort().reverse(), ...wanted.slice(0, 4).reverse()];

      const seen: string[][] = [];
      let cursor: string | null = null;
      do {
        const page: EventPage = await listPage(
          `reference=${reference}&event_type=${type}&status=received&page_size=4` +
            (cursor === null ? '' : `&cursor=${cursor}`),
        );
        seen.push(page.data.map((e) => e.event_id));
        cursor = page.next_cursor;
      } while (cursor !== null && seen.length < 10);

      expect(seen).toEqual([expected.slice(0, 4), expected.slice(4)]);
      const unconfirmed = await listPage(`reference=${reference}&status=unconfirmed`);
      expect(unconfirmed.data.map((e) => e.status)).toEqual(['unconfirmed']);
    });

    it('should accept a reference of 255 characters', async () => {
      const reference = `r${crypto.randomUUID()}`.padEnd(255, 'x');
      const eventId = await storeWithReference(reference, T0);
      const page = await listPage(`reference=${reference}`);
      expect(page.data.map((e) => e.event_id)).toEqual([eventId]);
    });

    it.each([
      ['reference=', 'reference'],
      [`reference=${'r'.repeat(256)}`, 'reference'],
      ['reference=a&reference=b', 'reference'],
      ['ref=pay_1', 'ref'],
    ])('should refuse %s with 400 validation_failed at %s', async (query, path) => {
      await expectValidationFailed(await list(query), [path]);
    });
  });

  describe('migration 0006 backfill', () => {
    it('should set the reference of rows stored without it from their body', async () => {
      const reference = newReference();
      const rows = {
        string: JSON.stringify({ event_id: 'x', data: { reference } }),
        number: JSON.stringify({ data: { reference: 42 } }),
        missing: JSON.stringify({ data: {} }),
        nested: JSON.stringify({ reference, data: { id: 1 } }),
        invalid: '{not json',
      };
      const ids = Object.fromEntries(
        Object.keys(rows).map((kind) => [kind, `evt_backfill_${kind}_${crypto.randomUUID()}`]),
      );
      await env.DB.batch(
        Object.entries(rows).map(([kind, rawBody]) =>
          env.DB.prepare(
            `INSERT INTO webhook_events (event_id, event_type, status, received_at, raw_body)
             VALUES (?1, 'charge_success', 'received', ?2, ?3)`,
          ).bind(ids[kind], T0, rawBody),
        ),
      );
      expect((await listPage(`reference=${reference}`)).data).toEqual([]);

      await env.DB.prepare(backfillStatement()).run();

      const stored = async (kind: string) =>
        (await findWebhookEvent(env.DB, ids[kind] ?? ''))?.reference;
      expect(await stored('string')).toBe(reference);
      expect(await stored('number')).toBeNull();
      expect(await stored('missing')).toBeNull();
      expect(await stored('nested')).toBeNull();
      expect(await stored('invalid')).toBeNull();
      expect((await listPage(`reference=${reference}`)).data.map((e) => e.event_id)).toEqual([
        ids.string,
      ]);
    });
  });
});
