/**
 * Only completed idempotency keys are ever purged, against the real D1 of miniflare: an
 * in-flight claim older than its retention survives the cron purge and a new claim of its
 * key, since its request may have reached the payment service and a retry must find the
 * claim to look the outcome up before sending anything.
 */
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { runScheduled } from '../../../worker/cron.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyClaim,
  purgeExpiredIdempotencyKeys,
} from '../../../worker/db/idempotency-keys.ts';

const NOW = 1_950_000_000_000;
const DAY_MS = 86_400_000;

function claim(caller: string, key: string, overrides: Partial<IdempotencyClaim> = {}) {
  return {
    caller,
    key,
    fingerprint: 'POST /disbursements/initialize aa',
    now: NOW - 30 * DAY_MS,
    lockedUntil: NOW - 30 * DAY_MS + 60_000,
    // Its retention ended a week ago.
    expiresAt: NOW - 7 * DAY_MS,
    takeOverStale: true,
    ...overrides,
  } satisfies IdempotencyClaim;
}

const stored = { status: 200, headers: {}, body: new Uint8Array([123, 125]) };

/** An in-flight claim and a completed key of a fresh caller, both past their retention. */
async function expiredPair(): Promise<string> {
  const caller = `purge-${crypto.randomUUID()}`;
  await claimIdempotencyKey(env.DB, claim(caller, 'in-flight'));
  const done = claim(caller, 'completed');
  await claimIdempotencyKey(env.DB, done);
  expect(await completeIdempotencyKey(env.DB, done, stored)).toBe(true);
  return caller;
}

describe('idempotency key purge (D1)', () => {
  it('should keep an in-flight claim older than the retention and delete the completed key', async () => {
    const caller = await expiredPair();
    for (let batch = 0; batch < 20; batch++) {
      if ((await purgeExpiredIdempotencyKeys(env.DB, NOW, 100)) === 0) break;
    }
    expect(await findIdempotencyKey(env.DB, caller, 'completed')).toBeUndefined();
    expect(await findIdempotencyKey(env.DB, caller, 'in-flight')).toMatchObject({
      state: 'in_flight',
      expiresAt: NOW - 7 * DAY_MS,
    });
  });

  it('should keep it through the cron trigger', async () => {
    const caller = await expiredPair();
    await runScheduled(createScheduledController({ scheduledTime: NOW }), env);
    expect(await findIdempotencyKey(env.DB, caller, 'completed')).toBeUndefined();
    expect((await findIdempotencyKey(env.DB, caller, 'in-flight'))?.state).toBe('in_flight');
  });

  it('should not let a new claim drop it: the same request takes it over, another is refused', async () => {
    const caller = await expiredPair();
    const retry = await claimIdempotencyKey(
      env.DB,
      claim(caller, 'in-flight', {
        now: NOW,
        lockedUntil: NOW + 60_000,
        expiresAt: NOW + DAY_MS,
      }),
    );
    // Taken over: the proxy looks the outcome up before sending anything.
    expect(retry.kind).toBe('taken_over');
    const other = await claimIdempotencyKey(
      env.DB,
      claim(caller, 'in-flight', {
        fingerprint: 'POST /disbursements/initialize bb',
        now: NOW + 1,
        lockedUntil: NOW + 60_001,
        expiresAt: NOW + DAY_MS,
      }),
    );
    expect(other).toMatchObject({
      kind: 'existing',
      record: { state: 'in_flight', fingerprint: 'POST /disbursements/initialize aa' },
    });
    // The completed key past its retention is absent to a new claim, as before.
    const again = await claimIdempotencyKey(
      env.DB,
      claim(caller, 'completed', { now: NOW, lockedUntil: NOW + 60_000, expiresAt: NOW + DAY_MS }),
    );
    expect(again.kind).toBe('claimed');
  });
});
