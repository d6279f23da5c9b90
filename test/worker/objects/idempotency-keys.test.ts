/**
 * The idempotency keys' Durable Object (worker/objects/idempotency-keys.ts) called as the
 * proxy calls it, on the real objects of workerd: the claim, its fencing token, the stored
 * answer and the purge by alarm. Each test uses its own caller name, so tests running in
 * parallel never see each other's rows.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type {
  HeldClaim,
  IdempotencyClaim,
  StoredResponse,
} from '../../../worker/objects/idempotency-keys.ts';
import { findIdempotencyKey, keyStub } from '../idempotency-keys.ts';

const NOW = 1_900_000_000_000;

function claim(overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return {
    caller: `do-${crypto.randomUUID()}`,
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

/** The claim, made in the object holding its key. */
async function claimKey(held: IdempotencyClaim) {
  return (await keyStub(held.caller, held.key)).claim(held);
}

/** Only the lock's fields, as the proxy sends them. */
function lockOf(held: HeldClaim): HeldClaim {
  return { caller: held.caller, key: held.key, lockedUntil: held.lockedUntil };
}

async function complete(held: HeldClaim, response: StoredResponse): Promise<boolean> {
  return (await keyStub(held.caller, held.key)).complete(lockOf(held), response);
}

async function release(held: HeldClaim): Promise<boolean> {
  return (await keyStub(held.caller, held.key)).release(lockOf(held));
}

async function expire(held: HeldClaim, now: number): Promise<boolean> {
  return (await keyStub(held.caller, held.key)).expireLock(lockOf(held), now);
}

async function settle(held: HeldClaim, until: number): Promise<boolean> {
  return (await keyStub(held.caller, held.key)).settleLock(lockOf(held), until);
}

describe('IdempotencyKeys (Durable Object)', () => {
  describe('claim', () => {
    it('should claim a new key and write an in-flight row', async () => {
      const first = claim();
      expect(await claimKey(first)).toEqual({ kind: 'claimed' });
      expect(await findIdempotencyKey(first.caller, 'key-1')).toEqual({
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
      await claimKey(first);
      const second = await claimKey({
        ...first,
        fingerprint: 'other',
        now: NOW + 1,
      });
      expect(second).toMatchObject({ kind: 'existing', record: { fingerprint: 'POST /x aa' } });
    });

    it('should let exactly one of many concurrent claims win', async () => {
      const first = claim();
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => claimKey(first)));
      expect(outcomes.filter((outcome) => outcome.kind === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.kind === 'existing')).toHaveLength(9);
    });

    it('should keep keys apart per caller', async () => {
      const first = claim();
      await claimKey(first);
      const other = await claimKey({ ...first, caller: `${first.caller}-b` });
      expect(other.kind).toBe('claimed');
    });

    it('should treat an expired completed key as absent', async () => {
      const first = claim({ expiresAt: NOW + 1000 });
      await claimKey(first);
      await complete(first, stored);
      const later = NOW + 1000;
      const again = await claimKey({
        ...first,
        fingerprint: 'POST /y bb',
        now: later,
        lockedUntil: later + 60_000,
        expiresAt: later + 86_400_000,
      });
      expect(again.kind).toBe('claimed');
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.fingerprint).toBe('POST /y bb');
    });

    it('should take over a stale in-flight claim of the same request', async () => {
      const first = claim();
      await claimKey(first);
      const later = NOW + 60_000;
      const again = await claimKey({
        ...first,
        now: later,
        lockedUntil: later + 60_000,
      });
      expect(again).toEqual({ kind: 'taken_over' });
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.lockedUntil).toBe(later + 60_000);
    });

    it('should not take over a lock that has not run out', async () => {
      const first = claim();
      await claimKey(first);
      const again = await claimKey({ ...first, now: NOW + 59_999 });
      expect(again).toMatchObject({ kind: 'existing', record: { lockedUntil: NOW + 60_000 } });
    });

    it('should not take over a stale claim of another request or when told not to', async () => {
      const first = claim();
      await claimKey(first);
      const later = { now: NOW + 60_000, lockedUntil: NOW + 120_000 };
      const other = await claimKey({ ...first, ...later, fingerprint: 'z' });
      const refused = await claimKey({
        ...first,
        ...later,
        takeOverStale: false,
      });
      expect(other.kind).toBe('existing');
      expect(refused.kind).toBe('existing');
    });
  });

  describe('complete', () => {
    it('should store status, headers and exact body bytes while the lock is held', async () => {
      const first = claim();
      await claimKey(first);
      expect(await complete(first, stored)).toBe(true);
      const record = await findIdempotencyKey(first.caller, 'key-1');
      expect(record?.state).toBe('completed');
      expect(record?.response).toEqual(stored);
      expect(record?.response?.body).toBeInstanceOf(Uint8Array);
    });

    it('should store nothing once the lock was taken over', async () => {
      const first = claim();
      await claimKey(first);
      await claimKey({
        ...first,
        now: NOW + 60_000,
        lockedUntil: NOW + 120_000,
      });
      expect(await complete(first, stored)).toBe(false);
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.state).toBe('in_flight');
    });

    it('should store an empty body as empty bytes', async () => {
      const first = claim();
      await claimKey(first);
      await complete(first, { ...stored, body: new Uint8Array() });
      const record = await findIdempotencyKey(first.caller, 'key-1');
      expect(record?.response?.body).toEqual(new Uint8Array());
    });
  });

  describe('release', () => {
    it('should delete a held claim', async () => {
      const first = claim();
      await claimKey(first);
      expect(await release(first)).toBe(true);
      expect(await findIdempotencyKey(first.caller, 'key-1')).toBeUndefined();
    });

    it('should not delete a completed key', async () => {
      const first = claim();
      await claimKey(first);
      await complete(first, stored);
      expect(await release(first)).toBe(false);
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.state).toBe('completed');
    });
  });

  describe('expireLock', () => {
    it('should make a held claim stale at once, and no longer held', async () => {
      const first = claim();
      await claimKey(first);
      expect(await expire(first, NOW + 5)).toBe(true);
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.lockedUntil).toBe(NOW + 5);
      expect(await complete(first, stored)).toBe(false);
      const again = await claimKey({ ...first, now: NOW + 6 });
      expect(again.kind).toBe('taken_over');
    });
  });

  describe('settleLock', () => {
    it('should keep a held claim locked until the end of the window, then let it be taken over', async () => {
      const first = claim({ lockedUntil: NOW + 1000 });
      await claimKey(first);
      // Longer than the lock it replaces: a settle window may outlast the claim's lock.
      expect(await settle(first, NOW + 5000)).toBe(true);
      const record = await findIdempotencyKey(first.caller, 'key-1');
      expect(record?.state).toBe('in_flight');
      expect(record?.lockedUntil).toBe(NOW + 5000);
      expect(await complete(first, stored)).toBe(false);
      const early = await claimKey({ ...first, now: NOW + 4999 });
      expect(early.kind).toBe('existing');
      const late = await claimKey({ ...first, now: NOW + 5000 });
      expect(late.kind).toBe('taken_over');
    });

    it('should change the fencing token even when the window ends with the held lock', async () => {
      const first = claim();
      await claimKey(first);
      expect(await settle(first, first.lockedUntil)).toBe(true);
      expect(await complete(first, stored)).toBe(false);
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.lockedUntil).toBe(
        first.lockedUntil + 1,
      );
    });

    it('should do nothing for a lock no longer held', async () => {
      const first = claim();
      await claimKey(first);
      await complete(first, stored);
      expect(await settle(first, NOW + 5000)).toBe(false);
      expect((await findIdempotencyKey(first.caller, 'key-1'))?.state).toBe('completed');
    });
  });

  describe('expiry by alarm', () => {
    /** A key of `caller` claimed (and completed unless `inFlight`), its retention ended `ago` ms ago. */
    async function expired(caller: string, key: string, ago: number, inFlight = false) {
      const now = Date.now();
      const held = claim({
        caller,
        key,
        now: now - ago - 1000,
        lockedUntil: now - ago,
        expiresAt: now - ago,
      });
      expect((await claimKey(held)).kind).toBe('claimed');
      if (!inFlight) expect(await complete(held, stored)).toBe(true);
      return held;
    }

    it('should set an alarm by the first expiry, and delete completed keys past their retention, never in-flight claims', async () => {
      const caller = `do-${crypto.randomUUID()}`;
      await expired(caller, 'done', 5000);
      await expired(caller, 'claim', 5000, true);
      const live = claim({ caller, key: 'live', now: Date.now(), expiresAt: Date.now() + 60_000 });
      await claimKey(live);
      await complete(live, stored);
      for (const key of ['done', 'claim', 'live']) {
        // Each key's own object: its alarm ran (or runs now) and kept or deleted it.
        await runDurableObjectAlarm(await keyStub(caller, key));
      }
      expect(await findIdempotencyKey(caller, 'done')).toBeUndefined();
      expect((await findIdempotencyKey(caller, 'claim'))?.state).toBe('in_flight');
      expect((await findIdempotencyKey(caller, 'live'))?.state).toBe('completed');
    });

    it('should set the next purge at the earliest expiry left, but no sooner than an hour after the last', async () => {
      const caller = `do-${crypto.randomUUID()}`;
      const at = Date.now() + 60_000;
      const live = claim({ caller, key: 'live', now: Date.now(), expiresAt: at });
      await claimKey(live);
      await complete(live, stored);
      const stub = await keyStub(caller, 'live');
      const ran = Date.now();
      await runDurableObjectAlarm(stub);
      expect((await findIdempotencyKey(caller, 'live'))?.state).toBe('completed');
      const alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
      // Keys expiring every moment would otherwise wake (and write) the object once a key.
      expect(alarm).toBeGreaterThanOrEqual(ran + 3_600_000);
      expect(alarm).toBeLessThanOrEqual(Date.now() + 3_600_000);
    });

    it('should not let a new claim drop an expired in-flight claim: the same request takes it over, another is refused', async () => {
      const caller = `do-${crypto.randomUUID()}`;
      const old = await expired(caller, 'claim', 7 * 86_400_000, true);
      const now = Date.now();
      const retry = await claimKey({
        ...old,
        now,
        lockedUntil: now + 60_000,
        expiresAt: now + 86_400_000,
      });
      // Taken over: the proxy looks the outcome up before sending anything.
      expect(retry.kind).toBe('taken_over');
      const other = await claimKey({
        ...old,
        fingerprint: 'POST /x bb',
        now: now + 1,
        lockedUntil: now + 60_001,
        expiresAt: now + 86_400_000,
      });
      expect(other).toMatchObject({
        kind: 'existing',
        record: { state: 'in_flight', fingerprint: 'POST /x aa' },
      });
    });
  });
});
