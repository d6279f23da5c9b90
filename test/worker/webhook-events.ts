/**
 * The webhook events' Durable Objects as the gateway tests see them: the object receiving
 * an event, and bindings lent to it. The object writes the event to D1 with its
 * own bindings, so a test that wants that write to fail, wait or be counted lends it a
 * wrapped D1 for the time of the call (the object is the real one; only the wrapper is the
 * test's).
 */
import { env, runInDurableObject } from 'cloudflare:test';
import { eventBucketName } from '../../worker/objects/buckets.ts';

/** The object receiving `eventId`, on the real namespace. */
export async function eventsStub(eventId: string) {
  return env.WEBHOOK_EVENTS.getByName(await eventBucketName(eventId));
}

/**
 * Bindings to lend an object, made from its own: a binding works only in the object that
 * holds it, so a wrapper must wrap the object's own (`(own) => ({ DB: heldD1(re, own.DB) })`).
 */
export type LentBindings = (own: Env) => Partial<Env>;

/**
 * Lends the bindings `lend` makes (over its own) to the object behind `stub` until the
 * returned function is called.
 *
 * @returns the function giving the object its own bindings back.
 */
export async function lendBindings(
  stub: DurableObjectStub,
  lend: LentBindings,
): Promise<() => Promise<void>> {
  const own = await runInDurableObject(stub, (instance) => {
    const object = instance as unknown as { env: Env };
    const before = object.env;
    object.env = { ...before, ...lend(before) };
    return before;
  });
  return async () => {
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as { env: Env }).env = own;
    });
  };
}

/**
 * Lends the object receiving `eventId` the D1 `wrap` makes of its own `DB` (one that fails
 * or records), until `giveBack` is called.
 *
 * @returns the wrapper (its counters read from the test) and the function giving it back.
 */
export async function lendEventObjectD1<T extends D1Database>(
  eventId: string,
  wrap: (own: D1Database) => T,
): Promise<{ readonly db: T; readonly giveBack: () => Promise<void> }> {
  let db: T | undefined;
  const giveBack = await lendBindings(await eventsStub(eventId), (own) => {
    db = wrap(own.DB);
    return { DB: db };
  });
  if (db === undefined) throw new Error('the object made no D1 to lend');
  return { db, giveBack };
}
