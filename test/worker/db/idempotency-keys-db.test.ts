/**
 * The D1 queries on `idempotency_keys` against the real D1 of miniflare (migrations
 * applied by fresh-storage.ts). Each test uses its own caller name, so files and
 * tests running in parallel never see each other's rows.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  expireIdempotencyLock,
  findIdempotencyKey,
  type IdempotencyClaim,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  settleIdempotencyLock,
} from '../../../worker/db/idempotency-keys.ts';

const NOW = 1_900_000_000_000;

function claim(overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return {
    caller: `db-${crypto.randomUUID()}`,
    key: 'key-1',
    fingerprint: 'POST /x aa',
    now: NOW,
    lockedUntil: NOW + 60_000,
    expiresAt: NOW + 86_400_000,
    takeOverStale: true,
    ...overrides,
  };
}

const stored = {
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: new Uint8Array([0, 1, 2, 254, 255, 123]),
};

describe('idempotency-keys (D1)', () => {
  describe('claimIdempotencyKey', () => {
    it('should claim a new key and write an in-flight row', async () => {
      const first = claim();
      expect(await claimIdempotencyKey(env.DB, first)).toEqual({
        kind: 'claimed',
        lock: { caller: first.caller, key: 'key-1', lockedUntil: NOW + 60_000, shard: env.DB },
      });
      expect(await findIdempotencyKey(env.DB, first.caller, 'key-1')).toEqual({
        caller: first.caller,
        key: 'key-1',
        fingerprint: 'POST /x aa',
        state: 'in_flight',
        lockedUntil: NOW + 60_000,
        response: undefined,
        createdAt: NOW,
        expiresAt: NOW + 86_400_000,
      });
    });

    it('should return the existing row to a second claim', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      const second = await claimIdempotencyKey(env.DB, {
        ...first,
        fingerprint: 'other',
        now: NOW + 1,
      });
      expect(second).toMatchObject({ kind: 'existing', record: { fingerprint: 'POST /x aa' } });
    });

    it('should let exactly one of many concurrent claims win', async () => {
      const first = claim();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => claimIdempotencyKey(env.DB, first)),
      );
      expect(outcomes.filter((outcome) => outcome.kind === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.kind === 'existing')).toHaveLength(9);
    });

    it('should keep keys apart per caller', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      const other = await claimIdempotencyKey(env.DB, { ...first, caller: `${first.caller}-b` });
      expect(other.kind).toBe('claimed');
    });

    it('should treat an expired completed key as absent', async () => {
      const first = claim({ expiresAt: NOW + 1000 });
      await claimIdempotencyKey(env.DB, first);
      await completeIdempotencyKey(env.DB, first, stored);
      const later = NOW + 1000;
      const again = await claimIdempotencyKey(env.DB, {
        ...first,
        fingerprint: 'POST /y bb',
        now: later,
        lockedUntil: later + 60_000,
        expiresAt: later + 86_400_000,
      });
      expect(again.kind).toBe('claimed');
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.fingerprint).toBe(
        'POST /y bb',
      );
    });

    it('should take over a stale in-flight claim of the same request', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      const later = NOW + 60_000;
      const again = await claimIdempotencyKey(env.DB, {
        ...first,
        now: later,
        lockedUntil: later + 60_000,
      });
      expect(again).toEqual({
        kind: 'taken_over',
        lock: { caller: first.caller, key: 'key-1', lockedUntil: later + 60_000, shard: env.DB },
      });
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.lockedUntil).toBe(
        later + 60_000,
      );
    });

    it('should not take over a lock that has not run out', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      const again = await claimIdempotencyKey(env.DB, { ...first, now: NOW + 59_999 });
      expect(again).toMatchObject({ kind: 'existing', record: { lockedUntil: NOW + 60_000 } });
    });

    it('should not take over a stale claim of another request or when told not to', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      const later = { now: NOW + 60_000, lockedUntil: NOW + 120_000 };
      const other = await claimIdempotencyKey(env.DB, { ...first, ...later, fingerprint: 'z' });
      const refused = await claimIdempotencyKey(env.DB, {
        ...first,
        ...later,
        takeOverStale: false,
      });
      expect(other.kind).toBe('existing');
      expect(refused.kind).toBe('existing');
    });
  });

  describe('completeIdempotencyKey', () => {
    it('should store status, headers and exact body bytes while the lock is held', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      expect(await completeIdempotencyKey(env.DB, first, stored)).toBe(true);
      const record = await findIdempotencyKey(env.DB, first.caller, 'key-1');
      expect(record?.state).toBe('completed');
      expect(record?.response).toEqual(stored);
      expect(record?.response?.body).toBeInstanceOf(Uint8Array);
    });

    it('should store nothing once the lock was taken over', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      await claimIdempotencyKey(env.DB, {
        ...first,
        now: NOW + 60_000,
        lockedUntil: NOW + 120_000,
      });
      expect(await completeIdempotencyKey(env.DB, first, stored)).toBe(false);
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.state).toBe('in_flight');
    });

    it('should store an empty body as empty bytes', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      await completeIdempotencyKey(env.DB, first, { ...stored, body: new Uint8Array() });
      const record = await findIdempotencyKey(env.DB, first.caller, 'key-1');
      expect(record?.response?.body).toEqual(new Uint8Array());
    });
  });

  describe('releaseIdempotencyKey', () => {
    it('should delete a held claim', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      expect(await releaseIdempotencyKey(env.DB, first)).toBe(true);
      expect(await findIdempotencyKey(env.DB, first.caller, 'key-1')).toBeUndefined();
    });

    it('should not delete a completed key', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      await completeIdempotencyKey(env.DB, first, stored);
      expect(await releaseIdempotencyKey(env.DB, first)).toBe(false);
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.state).toBe('completed');
    });
  });

  describe('expireIdempotencyLock', () => {
    it('should make a held claim stale at once, and no longer held', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      expect(await expireIdempotencyLock(env.DB, first, NOW + 5)).toBe(true);
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.lockedUntil).toBe(NOW + 5);
      expect(await completeIdempotencyKey(env.DB, first, stored)).toBe(false);
      const again = await claimIdempotencyKey(env.DB, { ...first, now: NOW + 6 });
      expect(again.kind).toBe('taken_over');
    });
  });

  describe('settleIdempotencyLock', () => {
    it('should keep a held claim locked until the end of the window, then let it be taken over', async () => {
      const first = claim({ lockedUntil: NOW + 1000 });
      await claimIdempotencyKey(env.DB, first);
      // Longer than the lock it replaces: a settle window may outlast the claim's lock.
      expect(await settleIdempotencyLock(env.DB, first, NOW + 5000)).toBe(true);
      const record = await findIdempotencyKey(env.DB, first.caller, 'key-1');
      expect(record?.state).toBe('in_flight');
      expect(record?.lockedUntil).toBe(NOW + 5000);
      expect(await completeIdempotencyKey(env.DB, first, stored)).toBe(false);
      const early = await claimIdempotencyKey(env.DB, { ...first, now: NOW + 4999 });
      expect(early.kind).toBe('existing');
      const late = await claimIdempotencyKey(env.DB, { ...first, now: NOW + 5000 });
      expect(late.kind).toBe('taken_over');
    });

    it('should change the fencing token even when the window ends with the held lock', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      expect(await settleIdempotencyLock(env.DB, first, first.lockedUntil)).toBe(true);
      expect(await completeIdempotencyKey(env.DB, first, stored)).toBe(false);
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.lockedUntil).toBe(
        first.lockedUntil + 1,
      );
    });

    it('should do nothing for a lock no longer held', async () => {
      const first = claim();
      await claimIdempotencyKey(env.DB, first);
      await completeIdempotencyKey(env.DB, first, stored);
      expect(await settleIdempotencyLock(env.DB, first, NOW + 5000)).toBe(false);
      expect((await findIdempotencyKey(env.DB, first.caller, 'key-1'))?.state).toBe('completed');
    });
  });

  describe('purgeExpiredIdempotencyKeys', () => {
    it('should delete expired rows up to the limit and keep live ones', async () => {
      const caller = `db-${crypto.randomUUID()}`;
      // Far in the past, so rows of other tests (expiring around NOW) are not counted.
      const past = 1_000_000;
      // Completed: an in-flight claim is never purged (idempotency-purge-db.test.ts).
      for (const key of ['a', 'b', 'c']) {
        const held = claim({ caller, key, now: 0, expiresAt: past });
        await claimIdempotencyKey(env.DB, held);
        await completeIdempotencyKey(env.DB, held, stored);
      }
      const live = claim({ caller, key: 'live', now: 0, expiresAt: past + 2 });
      await claimIdempotencyKey(env.DB, live);
      await completeIdempotencyKey(env.DB, live, stored);
      expect(await purgeExpiredIdempotencyKeys(env.DB, past, 2)).toBe(2);
      expect(await purgeExpiredIdempotencyKeys(env.DB, past, 2)).toBe(1);
      expect(await purgeExpiredIdempotencyKeys(env.DB, past, 2)).toBe(0);
      expect(await findIdempotencyKey(env.DB, caller, 'live')).toBeDefined();
      expect(await findIdempotencyKey(env.DB, caller, 'a')).toBeUndefined();
    });
  });
});
