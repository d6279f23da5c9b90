// Where the idempotency stage finds a key: the Durable Object its hash names
// (worker/objects/idempotency-keys.ts), and the claim the stage holds there.

import { keyBucketName } from '../../objects/buckets.ts';
import type { HeldClaim, IdempotencyKeys } from '../../objects/idempotency-keys.ts';

/** The object holding one key, as the stage calls it. */
export type KeyStore = DurableObjectStub<IdempotencyKeys>;

/** A claim this request holds: the key, its fencing token and the object holding it. */
export interface IdempotencyLock extends HeldClaim {
  readonly store: KeyStore;
}

/**
 * The object holding a caller's key.
 *
 * @param env - the Worker's bindings (`IDEMPOTENCY_KEYS`).
 * @param caller - the caller's name.
 * @param key - the idempotency key.
 */
export async function keyStore(env: Env, caller: string, key: string): Promise<KeyStore> {
  return env.IDEMPOTENCY_KEYS.getByName(await keyBucketName(caller, key));
}

/** The lock as the object's methods take it: the key and its fencing token. */
export function heldClaim(lock: IdempotencyLock): HeldClaim {
  return { caller: lock.caller, key: lock.key, lockedUntil: lock.lockedUntil };
}
