/**
 * The claim of an idempotency key around a change of generation of shards, in each order
 * two requests with one key can meet in: the real claim on the real D1 databases, the look
 * into the other generation's shard held at a gate (HeldD1) to force the order. Whoever
 * finds the other's live row yields to it; when both find each other both yield and the
 * retry claims; a stale claim is taken over where it is; an expired key counts as absent.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyKeyRecord,
} from '../../../worker/db/idempotency-keys.ts';
import { claimAcrossShards } from '../../../worker/proxy/stages/idempotency-shards.ts';
import { CALLER_NAME } from '../helpers.ts';
import { heldD1 } from './held-d1.ts';
import { holders } from './shard-helpers.ts';

/** A claim of `key` at `now`, as the stage makes it (lock 60 s, retention 1 day). */
function claimOf(key: string, now = Date.now(), fingerprint = 'POST /x abc'): IdempotencyClaim {
  return {
    caller: CALLER_NAME,
    key,
    fingerprint,
    now,
    lockedUntil: now + 60_000,
    expiresAt: now + 86_400_000,
    takeOverStale: true,
  };
}

describe('idempotency keys over shards', () => {
  describe('the claim around a change of generation', () => {
    it('should yield to a claim the other generation holds: the later claim keeps no row', async () => {
      const key = `yield-${crypto.randomUUID()}`;
      const older = await claimAcrossShards(
        { home: env.DB, others: [env.DB_SHARD_1] },
        claimOf(key),
      );
      expect(older.kind).toBe('claimed');
      const newer = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(newer).toMatchObject({ kind: 'existing', record: { state: 'in_flight' } });
      expect(await holders(key)).toEqual(['DB']);
    });

    it('should have both yield when each finds the other, and let the retry claim', async () => {
      const key = `both-${crypto.randomUUID()}`;
      // Each looks in the other's shard only once both claims are in.
      const seenByOld = heldD1(/./, env.DB_SHARD_1);
      const seenByNew = heldD1(/./, env.DB);
      const old = claimAcrossShards({ home: env.DB, others: [seenByOld] }, claimOf(key));
      const young = claimAcrossShards({ home: env.DB_SHARD_1, others: [seenByNew] }, claimOf(key));
      await Promise.all([seenByOld.held, seenByNew.held]);
      expect(await holders(key)).toEqual(['DB', 'DB_SHARD_1']);
      seenByOld.release('land');
      seenByNew.release('land');
      const outcomes = await Promise.all([old, young]);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['existing', 'existing']);
      // Both claims withdrawn: nothing was sent, and the next request claims the key.
      expect(await holders(key)).toEqual([]);
      const retry = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(retry.kind).toBe('claimed');
      expect(await holders(key)).toEqual(['DB_SHARD_1']);
    });

    it('should have only the one that finds the other yield when the other looked first', async () => {
      const key = `one-${crypto.randomUUID()}`;
      // The old generation's look waits; the new one claims and looks meanwhile.
      const seenByOld = heldD1(/./, env.DB_SHARD_1);
      const old = claimAcrossShards({ home: env.DB, others: [seenByOld] }, claimOf(key));
      await seenByOld.held;
      const young = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(young.kind).toBe('existing');
      seenByOld.release('land');
      expect((await old).kind).toBe('claimed');
      expect(await holders(key)).toEqual(['DB']);
    });

    it('should take a stale claim over where it is, never copying it to the new shard', async () => {
      const key = `stale-${crypto.randomUUID()}`;
      const then = Date.now() - 120_000;
      expect((await claimIdempotencyKey(env.DB, claimOf(key, then))).kind).toBe('claimed');
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_2, others: [env.DB] },
        claimOf(key),
      );
      expect(outcome.kind).toBe('taken_over');
      if (outcome.kind !== 'taken_over') return;
      expect(outcome.lock.shard).toBe(env.DB);
      expect(await holders(key)).toEqual(['DB']);
    });

    it("should answer the other shard's record to another request with the key (422 material)", async () => {
      const key = `other-${crypto.randomUUID()}`;
      await claimIdempotencyKey(env.DB, claimOf(key));
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_2, others: [env.DB] },
        claimOf(key, Date.now(), 'POST /y other'),
      );
      expect(outcome.kind).toBe('existing');
      const record = (outcome as { record: IdempotencyKeyRecord }).record;
      expect(record.fingerprint).toBe('POST /x abc');
      expect(await holders(key)).toEqual(['DB']);
    });

    it('should ignore a completed key past its retention in the other shard', async () => {
      const key = `expired-${crypto.randomUUID()}`;
      await env.DB.prepare(
        `INSERT INTO idempotency_keys (caller, idempotency_key, fingerprint, state, locked_until,
           created_at, expires_at) VALUES (?1, ?2, 'POST /x abc', 'completed', 0, 0, 1)`,
      )
        .bind(CALLER_NAME, key)
        .run();
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(outcome.kind).toBe('claimed');
    });

    it("should not recover a stale claim at home while the other shard's claim is still locked", async () => {
      // What a withdrawn claim whose delete failed leaves at home, beside the claim it
      // yielded to, whose request may still be settling upstream.
      const key = `orphan-${crypto.randomUUID()}`;
      await claimIdempotencyKey(env.DB_SHARD_1, claimOf(key, Date.now() - 120_000));
      await claimIdempotencyKey(env.DB, claimOf(key));
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(outcome).toMatchObject({ kind: 'existing', record: { state: 'in_flight' } });
      // Handed back stale and kept: a later retry looks again.
      expect(await holders(key)).toEqual(['DB', 'DB_SHARD_1']);
      const home = await findIdempotencyKey(env.DB_SHARD_1, CALLER_NAME, key);
      expect(home?.state).toBe('in_flight');
      expect(home?.lockedUntil).toBeLessThanOrEqual(Date.now());
    });

    it('should answer from a completed claim in the other shard rather than recover the stale one at home', async () => {
      const key = `orphan-done-${crypto.randomUUID()}`;
      await claimIdempotencyKey(env.DB_SHARD_1, claimOf(key, Date.now() - 120_000));
      const other = await claimIdempotencyKey(env.DB, claimOf(key));
      if (other.kind !== 'claimed') throw new Error('the other shard did not claim');
      const response = { status: 200, headers: {}, body: new TextEncoder().encode('{"ok":true}') };
      await completeIdempotencyKey(env.DB, other.lock, response);
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(outcome).toMatchObject({ kind: 'existing', record: { state: 'completed' } });
    });

    it('should recover through the home claim when both are stale', async () => {
      const key = `both-stale-${crypto.randomUUID()}`;
      const then = Date.now() - 120_000;
      await claimIdempotencyKey(env.DB_SHARD_1, claimOf(key, then));
      await claimIdempotencyKey(env.DB, claimOf(key, then));
      const outcome = await claimAcrossShards(
        { home: env.DB_SHARD_1, others: [env.DB] },
        claimOf(key),
      );
      expect(outcome.kind).toBe('taken_over');
      if (outcome.kind === 'taken_over') expect(outcome.lock.shard).toBe(env.DB_SHARD_1);
    });
  });
});
