/**
 * The cron trigger against the real D1: the Worker's `scheduled` handler purges
 * idempotency keys past their retention and keeps live ones.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PURGE_BATCH_SIZE, runScheduled } from '../../worker/cron.ts';
import { findIdempotencyKey } from '../../worker/db/idempotency-keys.ts';
import worker from '../../worker/index.ts';
import { type CapturedLogs, captureLogs } from './helpers.ts';

let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Writes completed keys of `caller` expiring at `expiresAt` (epoch ms). */
async function insertKeys(caller: string, keys: string[], expiresAt: number): Promise<void> {
  const insert = env.DB.prepare(
    `INSERT INTO idempotency_keys (caller, idempotency_key, fingerprint, state, locked_until,
       response_status, response_headers, response_body, created_at, expires_at)
     VALUES (?1, ?2, 'POST /x 00', 'completed', 0, 200, '{}', NULL, ?3, ?4)`,
  );
  await env.DB.batch(
    keys.map((key) => insert.bind(caller, key, expiresAt - 86_400_000, expiresAt)),
  );
}

async function countOf(caller: string): Promise<number> {
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM idempotency_keys WHERE caller = ?1')
    .bind(caller)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

describe('cron', () => {
  describe('scheduled', () => {
    it('should delete expired idempotency keys and keep live ones', async () => {
      const caller = `cron-${crypto.randomUUID()}`;
      const now = Date.now();
      await insertKeys(caller, ['old-1', 'old-2', 'old-3'], now - 1000);
      await insertKeys(caller, ['live-1', 'live-2'], now + 3_600_000);
      const ctx = createExecutionContext();
      await worker.scheduled(
        createScheduledController({ scheduledTime: now, cron: '*/15 * * * *' }),
        env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(await countOf(caller)).toBe(2);
      expect(await findIdempotencyKey(env.DB, caller, 'old-1')).toBeUndefined();
      expect((await findIdempotencyKey(env.DB, caller, 'live-1'))?.state).toBe('completed');
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'idempotency_keys_purged', cron: '*/15 * * * *' }),
      );
    });

    it('should delete a key expiring exactly now', async () => {
      const caller = `cron-${crypto.randomUUID()}`;
      const now = Date.now();
      await insertKeys(caller, ['edge'], now);
      await insertKeys(caller, ['next'], now + 1);
      await runScheduled(createScheduledController({ scheduledTime: now }), env);
      expect(await findIdempotencyKey(env.DB, caller, 'edge')).toBeUndefined();
      expect(await findIdempotencyKey(env.DB, caller, 'next')).toBeDefined();
    });
  });

  describe('runScheduled', () => {
    it('should purge in batches beyond one batch size', async () => {
      const caller = `cron-${crypto.randomUUID()}`;
      const now = Date.now();
      const keys = Array.from({ length: PURGE_BATCH_SIZE + 20 }, (_, index) => `k-${index}`);
      await insertKeys(caller, keys, now - 5000);
      const deleted = await runScheduled(createScheduledController({ scheduledTime: now }), env);
      // Other files may have expired rows too: at least ours went.
      expect(deleted).toBeGreaterThanOrEqual(keys.length);
      expect(await countOf(caller)).toBe(0);
    });
  });
});
