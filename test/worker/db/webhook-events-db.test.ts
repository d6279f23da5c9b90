/**
 * The D1 queries on `webhook_events` against the real D1 of miniflare (migrations
 * applied by fresh-storage.ts). Each test uses its own event ids, so files and tests
 * running in parallel never see each other's rows.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  bodySubscriptionIdSql,
  bodyTimestampDaySql,
  findWebhookEvent,
  insertWebhookEvent,
  insertWebhookEventStatement,
  type NewWebhookEvent,
  purgeWebhookEventsBefore,
  toWebhookEventRecord,
} from '../../../worker/db/webhook-events.ts';

const NOW = 1_900_000_000_000;

function newEvent(overrides: Partial<NewWebhookEvent> = {}): NewWebhookEvent {
  const eventId = `evt_db_${crypto.randomUUID()}`;
  return {
    eventId,
    eventType: 'charge_success',
    receivedAt: NOW,
    reference: null,
    rawBody: `{"event_id":"${eventId}",  "data":{"note":"caf\u00e9 \u{1F600}"}}\n`,
    ...overrides,
  };
}

async function countRows(eventId: string): Promise<number> {
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_events WHERE event_id = ?1')
    .bind(eventId)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

describe('webhook-events (D1)', () => {
  describe('insertWebhookEvent', () => {
    it('should store a new event as received and report it stored', async () => {
      const event = newEvent();
      expect(await insertWebhookEvent(env.DB, event)).toBe(true);
      expect(await findWebhookEvent(env.DB, event.eventId)).toEqual({
        ...event,
        status: 'received',
        outcome: 'no_subscriber',
      });
    });

    it('should keep the raw body exactly (whitespace, non-ASCII, trailing newline)', async () => {
      const event = newEvent();
      await insertWebhookEvent(env.DB, event);
      const stored = await findWebhookEvent(env.DB, event.eventId);
      expect(new TextEncoder().encode(stored?.rawBody)).toEqual(
        new TextEncoder().encode(event.rawBody),
      );
    });

    it('should report a duplicate and keep the first row untouched', async () => {
      const first = newEvent();
      await insertWebhookEvent(env.DB, first);
      const again = { ...first, eventType: 'other', receivedAt: NOW + 1, rawBody: '{}' };
      expect(await insertWebhookEvent(env.DB, again)).toBe(false);
      expect(await findWebhookEvent(env.DB, first.eventId)).toEqual({
        ...first,
        status: 'received',
        outcome: 'no_subscriber',
      });
      expect(await countRows(first.eventId)).toBe(1);
    });

    it('should store concurrent inserts of one event once, with exactly one winner', async () => {
      const event = newEvent();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => insertWebhookEvent(env.DB, event)),
      );
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await countRows(event.eventId)).toBe(1);
    });
  });

  describe('insertWebhookEventStatement', () => {
    it('should tell new from duplicate inside a batch through meta.changes', async () => {
      const event = newEvent();
      const [first, second] = await env.DB.batch([
        await insertWebhookEventStatement(env.DB, event),
        await insertWebhookEventStatement(env.DB, event),
      ]);
      expect(first?.meta.changes).toBe(1);
      expect(second?.meta.changes).toBe(0);
    });
  });

  describe('findWebhookEvent', () => {
    it('should return undefined for an unknown event id', async () => {
      expect(await findWebhookEvent(env.DB, `evt_db_${crypto.randomUUID()}`)).toBeUndefined();
    });
  });

  describe('toWebhookEventRecord', () => {
    it('should refuse a status it does not know', () => {
      const row = {
        event_id: 'e',
        event_type: 't',
        status: 'bogus',
        outcome: 'no_subscriber',
        received_at: NOW,
        reference: null,
        raw_body: '{}',
      };
      expect(() => toWebhookEventRecord(row)).toThrow('unknown webhook event status bogus');
    });
  });

  describe('purgeWebhookEventsBefore', () => {
    it('should count the events it deleted, not the deliveries and attempts deleted with them', async () => {
      // Received long before any other test's events, so the cutoff catches only these.
      const receivedAt = 1_000 + Math.floor(Math.random() * 1_000_000);
      const events = [newEvent({ receivedAt }), newEvent({ receivedAt })];
      for (const event of events) await insertWebhookEvent(env.DB, event);
      const statements = events.flatMap((event, i) =>
        [0, 1].flatMap((j) => {
          const id = `dlv_db_${i}_${j}_${crypto.randomUUID()}`;
          return [
            env.DB.prepare(
              `INSERT INTO deliveries (id, event_id, subscription_id, created_at, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?4)`,
            ).bind(id, event.eventId, `sub_db_${j}`, receivedAt),
            env.DB.prepare(
              `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, status, latency_ms)
               VALUES (?1, 1, ?2, 500, 10)`,
            ).bind(id, receivedAt),
          ];
        }),
      );
      await env.DB.batch(statements);
      // One event per statement first: the caller stops once a batch comes back short.
      expect(await purgeWebhookEventsBefore(env.DB, receivedAt + 1, 1)).toBe(1);
      expect(await purgeWebhookEventsBefore(env.DB, receivedAt + 1, 10)).toBe(1);
      expect(await purgeWebhookEventsBefore(env.DB, receivedAt + 1, 10)).toBe(0);
      for (const event of events) expect(await countRows(event.eventId)).toBe(0);
      const left = await env.DB.prepare(
        'SELECT COUNT(*) AS n FROM deliveries WHERE event_id IN (?1, ?2)',
      )
        .bind(events[0]?.eventId, events[1]?.eventId)
        .first<{ n: number }>();
      expect(left?.n).toBe(0);
    });
  });

  describe('stored form', () => {
    /** One of the relay's own events about a subscription, long enough to be compressed. */
    function relayEvent(eventId: string, timestamp: unknown): NewWebhookEvent {
      return newEvent({
        eventId,
        eventType: 'subscription.disabled',
        rawBody: JSON.stringify({
          event_type: 'subscription.disabled',
          event_id: eventId,
          timestamp,
          message: 'A subscription was disabled and gets no deliveries until it is enabled again',
          data: { subscription_id: 'sub_db_subject', reason: 'disabled by an operator' },
        }),
      });
    }

    async function storedForm(eventId: string) {
      return env.DB.prepare(
        `SELECT typeof(e.raw_body) AS type, length(CAST(e.raw_body AS BLOB)) AS bytes,
           ${bodyTimestampDaySql('e')} AS day, ${bodySubscriptionIdSql('e')} AS subject
         FROM webhook_events AS e WHERE e.event_id = ?1`,
      )
        .bind(eventId)
        .first<{ type: string; bytes: number; day: number | null; subject: string | null }>();
    }

    it('should store a typical body compressed, in fewer bytes, and read it back byte for byte', async () => {
      const event = relayEvent(`evt_db_${crypto.randomUUID()}`, '2026-11-27T10:00:00.000Z');
      await insertWebhookEvent(env.DB, event);
      const form = await storedForm(event.eventId);
      expect(form?.type).toBe('blob');
      expect(form?.bytes).toBeLessThan(new TextEncoder().encode(event.rawBody).byteLength);
      const stored = await findWebhookEvent(env.DB, event.eventId);
      expect(new TextEncoder().encode(stored?.rawBody)).toEqual(
        new TextEncoder().encode(event.rawBody),
      );
    });

    it('should copy what SQL reads in a compressed body into columns, as json_extract reads it', async () => {
      const dated = relayEvent(`evt_db_${crypto.randomUUID()}`, '2026-11-27T10:00:00.000Z');
      const undated = relayEvent(`evt_db_${crypto.randomUUID()}`, { not: 'a date' });
      for (const event of [dated, undated]) await insertWebhookEvent(env.DB, event);
      const expected = await env.DB.prepare(
        `SELECT julianday(json_extract(?1, '$.timestamp')) AS day,
           json_extract(?1, '$.data.subscription_id') AS subject`,
      )
        .bind(dated.rawBody)
        .first<{ day: number; subject: string }>();
      expect(expected?.day).toBeTypeOf('number');
      expect(await storedForm(dated.eventId)).toMatchObject({ type: 'blob', ...expected });
      expect(await storedForm(undated.eventId)).toMatchObject({
        type: 'blob',
        day: null,
        subject: 'sub_db_subject',
      });
    });

    it('should read a body stored as text before compression, and what SQL reads in it', async () => {
      const event = relayEvent(`evt_db_${crypto.randomUUID()}`, '2026-11-27T10:00:00.000Z');
      // A row as the code before compression wrote it: the text, no copied columns.
      await env.DB.prepare(
        `INSERT INTO webhook_events (event_id, event_type, received_at, raw_body)
         VALUES (?1, ?2, ?3, ?4)`,
      )
        .bind(event.eventId, event.eventType, event.receivedAt, event.rawBody)
        .run();
      const copy = relayEvent(`evt_db_${crypto.randomUUID()}`, '2026-11-27T10:00:00.000Z');
      await insertWebhookEvent(env.DB, copy);
      expect((await findWebhookEvent(env.DB, event.eventId))?.rawBody).toBe(event.rawBody);
      const [old, compressed] = [await storedForm(event.eventId), await storedForm(copy.eventId)];
      expect(old?.type).toBe('text');
      expect(compressed?.type).toBe('blob');
      expect({ day: old?.day, subject: old?.subject }).toEqual({
        day: compressed?.day,
        subject: 'sub_db_subject',
      });
    });
  });

  describe('migration', () => {
    it('should create the listing indexes on type, status, outcome, reference and date, and the due checks', async () => {
      const { results } = await env.DB.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_events' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      ).all<{ name: string }>();
      expect(results.map((row) => row.name)).toEqual([
        'webhook_events_next_check',
        'webhook_events_outcome_received',
        'webhook_events_received',
        'webhook_events_reference_received',
        'webhook_events_status_received',
        'webhook_events_type_received',
      ]);
    });
  });
});
