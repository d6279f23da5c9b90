// Where an idempotency key is claimed when the keys are spread over several D1 databases
// (`D1_SHARDS`, worker/db/shards.ts), and the claim that stays exact while a new generation
// of shards takes over: a key is claimed in its home shard, then looked for in the shards
// that may already hold it (its shard in an older generation whose keys are still kept, or
// in a later generation just before that one starts). Of two requests with one key
// claiming under different generations, the one that looks second finds the other's row:
// whoever finds a row yields to it (its own fresh claim is deleted and the row found
// answers: a replay, 422, 409 in flight, or a take-over of a stale claim where that row
// is). When both find each other both yield, both answer 409, and the retry claims anew:
// nothing is sent twice, at the cost of one retry in a race that only a change of shards
// can produce.
import type { Settings } from '../../config.ts';
import {
  type ClaimOutcome,
  claimIdempotencyKey,
  expireIdempotencyLock,
  findIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyKeyRecord,
  releaseIdempotencyKey,
  takeOverIdempotencyKey,
} from '../../db/idempotency-keys.ts';
import { shardDatabase } from '../../db/shard-bindings.ts';
import { placeKey } from '../../db/shards.ts';
import { claimLockMs } from '../settle-window.ts';

/**
 * The largest difference between two isolates' clocks the switch to a new generation
 * allows for, in milliseconds.
 */
const CLOCK_SKEW_MS = 60_000;

/** Where one key is claimed, and the databases that may already hold it. */
export interface IdempotencyPlacement {
  /** The key's shard in the generation in effect: a new claim goes there. */
  readonly home: D1Database;
  /** The key's shards in the other generations that may hold it, oldest first. */
  readonly others: readonly D1Database[];
}

/**
 * Places a caller's key at `now`: its home shard and the others to look in. Keys are
 * looked for in an older generation for the retention plus the claim lock (an in-flight
 * claim is older than its key's retention only once its lock ran out), and in a later
 * generation from the claim lock plus {@link CLOCK_SKEW_MS} before it starts (the
 * longest a claim can take from reading the clock to landing).
 *
 * @param env - the Worker's bindings (the D1 databases `D1_SHARDS` names).
 * @param settings - `shards`, the idempotency retention and lock.
 * @param caller - the caller's name.
 * @param key - the idempotency key.
 * @param now - epoch milliseconds.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding.
 */
export async function placeIdempotencyKey(
  env: object,
  settings: Settings,
  caller: string,
  key: string,
  now: number,
): Promise<IdempotencyPlacement> {
  const lockMs = claimLockMs(settings);
  const placement = await placeKey(settings.shards, JSON.stringify([caller, key]), now, {
    lookBackMs: settings.idempotency.retentionSec * 1000 + lockMs,
    switchWindowMs: lockMs + CLOCK_SKEW_MS,
  });
  return {
    home: shardDatabase(env, placement.home),
    others: placement.others.map((name) => shardDatabase(env, name)),
  };
}

/**
 * Claims a key where `placement` says (see the top of this file): in the home shard, then,
 * when it holds the key's lock (a new claim, or a stale one taken over), a look at the
 * others. A live row found there wins over a new claim, which is withdrawn. A stale claim
 * taken over at home yields only to a row that is not stale itself (locked, or completed):
 * the home row may be what is left of a claim that yielded but could not be withdrawn (its
 * delete failed), and recovering through it while the other row's request may still be
 * settling upstream could send the request twice; the home row is handed back stale,
 * unchanged, and the other row answers. When both are stale the home one is recovered (a
 * lookup first, as for any stale claim).
 *
 * @param placement - from {@link placeIdempotencyKey}.
 * @param claim - the claim, as for `claimIdempotencyKey`.
 * @returns what the claim found; a lock held in another shard than home carries it.
 */
export async function claimAcrossShards(
  placement: IdempotencyPlacement,
  claim: IdempotencyClaim,
): Promise<ClaimOutcome> {
  const outcome = await claimIdempotencyKey(placement.home, claim);
  // A row already at home and answering (in flight or completed) was claimed after the same look.
  if (outcome.kind === 'existing' || placement.others.length === 0) return outcome;
  const found = await findLiveElsewhere(placement.others, claim);
  if (found === undefined) return outcome;
  const { record, shard } = found;
  const stale = record.state === 'in_flight' && record.lockedUntil <= claim.now;
  if (outcome.kind === 'taken_over') {
    if (stale) return outcome;
    await expireIdempotencyLock(placement.home, outcome.lock, claim.now);
    return { kind: 'existing', record };
  }
  await releaseIdempotencyKey(placement.home, outcome.lock);
  if (claim.takeOverStale && stale && record.fingerprint === claim.fingerprint) {
    const lock = await takeOverIdempotencyKey(shard, claim);
    if (lock !== undefined) return { kind: 'taken_over', lock };
  }
  return { kind: 'existing', record };
}

/** The first of `shards` holding a live row of the key (in flight, or not expired yet). */
async function findLiveElsewhere(
  shards: readonly D1Database[],
  claim: IdempotencyClaim,
): Promise<{ record: IdempotencyKeyRecord; shard: D1Database } | undefined> {
  const records = await Promise.all(
    shards.map((shard) => findIdempotencyKey(shard, claim.caller, claim.key)),
  );
  for (const [index, record] of records.entries()) {
    const live =
      record !== undefined && (record.state === 'in_flight' || record.expiresAt > claim.now);
    const shard = shards[index];
    if (live && shard !== undefined) return { record, shard };
  }
  return undefined;
}
