// Refusals remembered in the isolate, so a caller far over its limit does not cost its limiter
// objects one call per refused request: that load is what overloads an object (and a limiter
// that cannot answer lets requests in). Exact: a limiter object counts only what it allows,
// so its schedule never moves earlier, and a request it refused with a wait of W ms would be
// refused by it again for those W ms, whatever other isolates do meanwhile. Only for counts
// that are never refunded (callers, webhook addresses), not the admin sign-in throttle.

/** Objects whose refusal is remembered per binding, at most: the map is emptied past it. */
const MAX_REMEMBERED_OBJECTS = 10_000;

// Per limiter binding (a test's private set of objects is another binding): for each
// `<object name> <limit>`, until when it refuses, in epoch milliseconds.
const refusedUntil = new WeakMap<object, Map<string, number>>();

function memoryOf(binding: object): Map<string, number> {
  let memory = refusedUntil.get(binding);
  if (memory === undefined) {
    memory = new Map();
    refusedUntil.set(binding, memory);
  }
  return memory;
}

/**
 * How long the object `name` of `binding`, asked with `limit`, is known to refuse from now,
 * without asking it.
 *
 * @param binding - the `RATE_LIMITER` namespace the object belongs to.
 * @param name - the limiter object's name.
 * @param limit - the limit per minute it would be asked with (another limit is another
 *   schedule: nothing is known of it).
 * @returns the wait in milliseconds, or `undefined` when the object must be asked.
 */
export function knownRefusal(binding: object, name: string, limit: number): number | undefined {
  const memory = refusedUntil.get(binding);
  const key = `${name} ${limit}`;
  const until = memory?.get(key);
  if (until === undefined) return undefined;
  const wait = until - Date.now();
  if (wait > 0) return wait;
  memory?.delete(key);
  return undefined;
}

/**
 * Remembers that the object refused a request asked at `askedAt` with a wait of
 * `retryAfterMs`. The wait runs from before the call, not from its answer: the object
 * decided somewhere in between, so the isolate never refuses longer than the object would.
 *
 * @param binding - the `RATE_LIMITER` namespace the object belongs to.
 * @param name - the limiter object's name.
 * @param limit - the limit per minute it was asked with.
 * @param askedAt - when the call was made, in epoch milliseconds.
 * @param retryAfterMs - the wait it answered, in milliseconds.
 */
export function rememberRefusal(
  binding: object,
  name: string,
  limit: number,
  askedAt: number,
  retryAfterMs: number,
): void {
  if (retryAfterMs <= 0) return;
  const memory = memoryOf(binding);
  if (memory.size >= MAX_REMEMBERED_OBJECTS) memory.clear();
  memory.set(`${name} ${limit}`, askedAt + retryAfterMs);
}
