/**
 * The retention purge in bounded batches (`purgeExpiredEvents` in worker/relay/sweeper.ts),
 * on the real D1, its statements counted by `recordingDb()`: a run never makes more D1 queries
 * than its bound, however many events are past retention, and the next run resumes.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { purgeExpiredEvents } from '../../../worker/relay/sweeper.ts';
import { recordingDb } from '../helpers.ts';

/**
 * Stores `count` events received at `first`, `first + 1`, ..., each with one delivery and one
 * attempt (what the purge deletes with it).
 */
async function storeOldEvents(first: number, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `evt_purge_${crypto.randomUUID()}`);
  await env.DB.batch(
    ids.flatMap((eventId, index) => [
      env.DB.prepare(
        `INSERT INTO webhook_events (event_id, event_type, received_at, raw_body)
         VALUES (?1, 'purge_test', ?2, '{}')`,
      ).bind(eventId, first + index),
      env.DB.prepare(
        `INSERT INTO deliveries (id, event_id, subscription_id, created_at, updated_at)
         VALUES (?1, ?2, 'sub_purge', ?3, ?3)`,
      ).bind(`dlv_${eventId}`, eventId, first + index),
      env.DB.prepare(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, status, latency_ms)
         VALUES (?1, 1, ?2, 500, 10)`,
      ).bind(`dlv_${eventId}`, first + index),
    ]),
  );
  return ids;
}

/** How many of `ids` are left as events, deliveries and attempts. */
async function left(ids: readonly string[]) {
  const row = await env.DB.prepare(
    `SELECT
       (SELECT COUNT(*) FROM webhook_events WHERE event_id IN (SELECT value FROM json_each(?1))) AS events,
       (SELECT COUNT(*) FROM deliveries WHERE event_id IN (SELECT value FROM json_each(?1))) AS deliveries,
       (SELECT COUNT(*) FROM delivery_attempts
         WHERE delivery_id IN (SELECT 'dlv_' || value FROM json_each(?1))) AS attempts`,
  )
    .bind(JSON.stringify(ids))
    .first<{ events: number; deliveries: number; attempts: number }>();
  return row;
}

describe('retention purge', () => {
  describe('purgeExpiredEvents', () => {
    it('should stop at its statement bound with more left, and the next run resume', async () => {
      // Received before 1970: no other test stores events this old.
      const first = -1_000_000 - Math.floor(Math.random() * 1_000_000);
      const ids = await storeOldEvents(first, 7);
      const cutoff = first + 7;
      const limits = { batchSize: 2, maxStatements: 2 };

      const run1 = recordingDb();
      expect(await purgeExpiredEvents(run1.db, cutoff, limits)).toEqual({
        purged: 4,
        statements: 2,
        more: true,
      });
      expect(run1.statements).toHaveLength(2);
      expect(await left(ids)).toEqual({ events: 3, deliveries: 3, attempts: 3 });
      // The oldest went first: the events left are the three received last.
      const { results } = await env.DB.prepare(
        `SELECT received_at FROM webhook_events WHERE event_id IN (SELECT value FROM json_each(?1))
         ORDER BY received_at`,
      )
        .bind(JSON.stringify(ids))
        .all<{ received_at: number }>();
      expect(results.map((row) => row.received_at)).toEqual([first + 4, first + 5, first + 6]);

      const run2 = recordingDb();
      expect(await purgeExpiredEvents(run2.db, cutoff, limits)).toEqual({
        purged: 3,
        statements: 2,
        more: false,
      });
      expect(run2.statements).toHaveLength(2);
      expect(await left(ids)).toEqual({ events: 0, deliveries: 0, attempts: 0 });

      const run3 = recordingDb();
      expect(await purgeExpiredEvents(run3.db, cutoff, limits)).toEqual({
        purged: 0,
        statements: 1,
        more: false,
      });
    });

    it('should keep events received at or after the cutoff', async () => {
      const first = -3_000_000 - Math.floor(Math.random() * 1_000_000);
      const ids = await storeOldEvents(first, 3);
      const progress = await purgeExpiredEvents(env.DB, first + 1, {
        batchSize: 10,
        maxStatements: 5,
      });
      expect(progress).toEqual({ purged: 1, statements: 1, more: false });
      expect(await left(ids)).toEqual({ events: 2, deliveries: 2, attempts: 2 });
    });

    it('should refuse limits that would make no progress or no bound', async () => {
      for (const limits of [
        { batchSize: 0, maxStatements: 1 },
        { batchSize: 1, maxStatements: 0 },
        { batchSize: 1.5, maxStatements: 1 },
        { batchSize: 1, maxStatements: Number.POSITIVE_INFINITY },
      ]) {
        await expect(purgeExpiredEvents(env.DB, 0, limits)).rejects.toThrow(RangeError);
      }
    });
  });
});
