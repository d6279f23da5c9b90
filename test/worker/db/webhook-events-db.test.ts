/**
 * The D1 queries on `webhook_events` against the real D1 of miniflare (migrations
 * applied by apply-migrations.ts). Each test uses its own event ids, so files and tests
 * running in parallel never see each other's rows.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
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
        insertWebhookEventStatement(env.DB, event),
        insertWebhookEventStatement(env.DB, event),
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
