// Which Durable Object holds an idempotency key, and which one receives a webhook event.
// Pure (no Workers types): the load model reads the key count.
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
  const digest = await sha256(JSON.stringify([caller, key]));
  return `keys-${bytesToHex(digest.subarray(0, 1))}`;
}

/**
 * The name of the object receiving a webhook event: `events-<n>`, n the first byte (two hex
 * digits) of the SHA-256 of the event id, so one of 256. The objects keep nothing, so the
 * count may change with a deploy (docs/assumptions.md, "Webhook events received once").
 *
 * @param eventId - the provider's `event_id`.
 * @returns the object's name, for `WEBHOOK_EVENTS.getByName`.
 */
export async function eventBucketName(eventId: string): Promise<string> {
  const digest = await sha256(eventId);
  return `events-${bytesToHex(digest.subarray(0, 1))}`;
}

async function sha256(text: string): Promise<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}
