/**
 * Idempotency keys spread over three D1 databases (`D1_SHARDS`), through the real gateway,
 * real D1 and the real sandbox over HTTP: each key lives in the shard its placement names
 * and replays from there; a gateway growing from one shard to three in the middle of
 * traffic loses no key and sends nothing twice; the cron purges every shard; a setting that
 * cannot be used answers 503. The claim's races around a change of generation:
 * idempotency-shard-races.test.ts.
 */
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { runScheduled } from '../../../worker/cron.ts';
import { findIdempotencyKey } from '../../../worker/db/idempotency-keys.ts';
import { placeKey } from '../../../worker/db/shards.ts';
import { transferBody } from '../../support/payloads.ts';
import { sleep } from '../fault-bindings.ts';
import {
  CALLER_NAME,
  expectConfigurationError,
  fetchGateway,
  postJson,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { database, holders, SHARDS, type ShardName } from './shard-helpers.ts';

const logs = useCapturedLogs();

const THREE = SHARDS.join(',');
const TRANSFER = '/disbursements/initialize';

/** A small transfer with a fresh reference: a test sends about 150. */
function transfer(): Record<string, unknown> {
  return transferBody({ amount: 12.5 });
}

/** One keyed transfer POST under `shards`, with a request id of its own. */
async function send(
  shards: string,
  key: string,
  body: Record<string, unknown>,
): Promise<{ requestId: string; status: number; text: string; replayed: boolean }> {
  const requestId = uniqueRequestId();
  const request = postJson(TRANSFER, body, { requestId, headers: { 'Idempotency-Key': key } });
  const res = await fetchGateway(request, { D1_SHARDS: shards });
  return {
    requestId,
    status: res.status,
    text: await res.text(),
    replayed: res.headers.get('Idempotent-Replayed') === 'true',
  };
}

/** How many requests reached the sandbox under any of `requestIds`. */
async function upstreamSends(requestIds: readonly string[]): Promise<number> {
  const logged = await Promise.all(requestIds.map((id) => sandboxRequests(id)));
  return logged.reduce((sum, entries) => sum + entries.length, 0);
}

describe('idempotency keys over shards', () => {
  it('should keep each key in the shard its placement names, and replay it from there', async () => {
    // Eight keys for each shard, picked by the placement rule (which shards.test.ts pins).
    const generations = [{ from: Number.NEGATIVE_INFINITY, shards: [...SHARDS] }];
    const placed = new Map<string, ShardName>();
    const perShard = new Map<ShardName, number>();
    for (let i = 0; i < 300 && placed.size < 24; i++) {
      const key = `spread-${i}-${crypto.randomUUID()}`;
      const { home } = await placeKey(generations, JSON.stringify([CALLER_NAME, key]), 0, {
        lookBackMs: 0,
        switchWindowMs: 0,
      });
      const shard = home as ShardName;
      if ((perShard.get(shard) ?? 0) >= 8) continue;
      perShard.set(shard, (perShard.get(shard) ?? 0) + 1);
      placed.set(key, shard);
    }
    expect([...perShard.values()]).toEqual([8, 8, 8]);
    const keys = [...placed.keys()];
    const bodies = keys.map(() => transfer());
    const first = await Promise.all(keys.map((key, i) => send(THREE, key, bodies[i] ?? {})));
    expect(first.map((sent) => sent.status)).toEqual(keys.map(() => 200));
    for (const key of keys) expect(await holders(key)).toEqual([placed.get(key)]);
    const again = await Promise.all(keys.map((key, i) => send(THREE, key, bodies[i] ?? {})));
    for (const [i, retry] of again.entries()) {
      expect(retry).toMatchObject({ status: 200, text: first[i]?.text, replayed: true });
    }
    expect(await upstreamSends(again.map((retry) => retry.requestId))).toBe(0);
  });

  it('should lose no key and send nothing twice when one shard grows to three in the middle of traffic', async () => {
    const bodies = new Map<string, Record<string, unknown>>();
    const sent = new Map<string, { requestId: string; status: number; text: string }[]>();
    const record = async (shards: string, key: string) => {
      if (!bodies.has(key)) bodies.set(key, transfer());
      const result = await send(shards, key, bodies.get(key) ?? {});
      sent.set(key, [...(sent.get(key) ?? []), result]);
      return result;
    };
    // Keys written while one shard held everything.
    const before = Array.from({ length: 8 }, (_, i) => `before-${i}-${crypto.randomUUID()}`);
    for (const key of before) expect((await record('DB', key)).status).toBe(200);
    // Three shards from 1.5 s from now: requests before then check the new generation too
    // (the switch window), requests after it check the old one (the look-back).
    const switchAt = Date.now() + 1500;
    const grown = `DB; ${new Date(switchAt).toISOString()}=${THREE}`;
    const during: string[] = [];
    // Each wave, 100 ms apart: a new key twice at once, a retry of the key of three waves
    // before, and a retry of a key from before; until 1.5 s after the switch, 60 waves at most.
    for (let wave = 0; wave < 60 && Date.now() < switchAt + 1500; wave++) {
      await sleep(100);
      const key = `during-${wave}-${crypto.randomUUID()}`;
      during.push(key);
      await Promise.all([
        record(grown, key),
        record(grown, key),
        ...(during[wave - 3] === undefined ? [] : [record(grown, during[wave - 3] ?? '')]),
        record(grown, before[wave % before.length] ?? ''),
      ]);
    }
    expect(Date.now()).toBeGreaterThan(switchAt);
    // Every key once more, after the traffic: each answers its stored response.
    const keys = [...before, ...during];
    for (const key of keys) {
      const last = await record(grown, key);
      const answers = sent.get(key) ?? [];
      const original = answers.find((answer) => answer.status === 200);
      expect(last, key).toMatchObject({ status: 200, text: original?.text, replayed: true });
      // Only 200 (first or replayed) or 409 (the same key in flight) on the way.
      expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 409)).toEqual(
        [],
      );
      expect(await upstreamSends(answers.map((answer) => answer.requestId)), key).toBe(1);
      expect(await holders(key), key).toHaveLength(1);
    }
    // The keys from before stayed where they were written; later ones went to the new shards.
    for (const key of before) expect(await holders(key)).toEqual(['DB']);
    const homes = new Set((await Promise.all(during.map(holders))).flat());
    expect(homes.has('DB_SHARD_1') || homes.has('DB_SHARD_2')).toBe(true);
  });

  describe('retention purge', () => {
    it('should purge expired keys in every shard, a retired generation included', async () => {
      const key = `purge-${crypto.randomUUID()}`;
      const insert = (db: D1Database, suffix: string, expiresAt: number) =>
        db
          .prepare(
            `INSERT INTO idempotency_keys (caller, idempotency_key, fingerprint, state,
               locked_until, created_at, expires_at) VALUES (?1, ?2, 'f', 'completed', 0, 0, ?3)`,
          )
          .bind(CALLER_NAME, `${key}-${suffix}`, expiresAt)
          .run();
      const now = Date.now();
      for (const name of SHARDS) {
        await insert(database(name), 'expired', now - 1);
        await insert(database(name), 'live', now + 60_000);
      }
      // DB_SHARD_2 alone, then DB and DB_SHARD_1 since an hour ago: the first is retired.
      const shards = `DB_SHARD_2; ${new Date(now - 3_600_000).toISOString()}=DB,DB_SHARD_1`;
      const deleted = await runScheduled(createScheduledController({ scheduledTime: now }), {
        ...env,
        D1_SHARDS: shards,
      });
      expect(deleted).toBeGreaterThanOrEqual(3);
      for (const name of SHARDS) {
        const db = database(name);
        expect(await findIdempotencyKey(db, CALLER_NAME, `${key}-expired`), name).toBeUndefined();
        expect(await findIdempotencyKey(db, CALLER_NAME, `${key}-live`), name).toBeDefined();
      }
    });
  });

  describe('configuration', () => {
    it('should answer 503 naming D1_SHARDS when it names no D1 binding, logged', async () => {
      const res = await fetchGateway(
        postJson(TRANSFER, transfer(), { headers: { 'Idempotency-Key': 'k-missing' } }),
        { D1_SHARDS: 'DB,DB_SHARD_9' },
      );
      await expectConfigurationError(res, ['D1_SHARDS']);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          event: 'config_invalid',
          setting: 'D1_SHARDS',
          problem: expect.stringContaining('"DB_SHARD_9"'),
        }),
      );
    });

    it('should answer 503 naming D1_SHARDS when it cannot be read', async () => {
      const res = await fetchGateway(
        postJson(TRANSFER, transfer(), { headers: { 'Idempotency-Key': 'k-invalid' } }),
        { D1_SHARDS: 'DB; tomorrow=DB,DB_SHARD_1' },
      );
      await expectConfigurationError(res, ['D1_SHARDS']);
    });
  });
});
