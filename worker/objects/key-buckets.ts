// Which Durable Object holds an idempotency key. Pure (no Workers types): the load model
// reads the same count.
import { bytesToHex } from '../../lib/shared.ts';

/**
 * How many objects hold the keys: fixed for good, since a key must be found where it was
 * claimed (docs/assumptions.md, "Idempotency keys").
 *
 * @internal Exported for the load model (bench/scale/), which counts the same objects.
 */
export const KEY_BUCKETS = 256;

/**
 * The name of the object holding a caller's key: `keys-<n>`, n the first byte (two hex
 * digits) of the SHA-256 of `[caller, key]` as JSON, so one of {@link KEY_BUCKETS}.
 *
 * @param caller - the caller's name.
 * @param key - the idempotency key.
 * @returns the object's name, for `IDEMPOTENCY_KEYS.getByName`.
 */
export async function keyBucketName(caller: string, key: string): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([caller, key]));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `keys-${bytesToHex(digest.subarray(0, 1))}`;
}
