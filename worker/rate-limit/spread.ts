// How one limit (a caller's RATE_LIMIT_PER_MINUTE, an address's WEBHOOK_RATE_LIMIT_PER_MINUTE)
// is spread over several limiter objects once it is more than one object should be asked to
// serve: a Durable Object runs one request at a time, and the platform caps one object near
// 1,000 requests a second, so a single object would throttle a busy caller below its limit.

/** One limiter object's part of a limit: which object, and its own limit per minute. */
export interface LimiterShare {
  /** The limiter object's name: the key itself when the limit fits in one object. */
  readonly name: string;
  /** Requests per minute this object allows: the shares of a limit add up to it exactly. */
  readonly limit: number;
}

/** Keys whose next turn is remembered in this isolate, at most: the map is emptied past it. */
const MAX_REMEMBERED_KEYS = 10_000;

// The next turn of each spread key in this isolate (see nextTurn).
const turns = new Map<string, number>();

/**
 * The limiter object the next request of `key` counts in, and that object's limit.
 *
 * A limit of at most `perObject` a minute stays in one object named `key`, counted exactly
 * as before. A larger one is spread over `ceil(limit / perObject)` objects
 * (`<key>/<index>-of-<count>`), each allowing its share: `floor(limit / count)`, the first
 * `limit % count` objects one more, so the shares add up to `limit` and the sum of what the
 * objects allow can never exceed it. Each isolate deals a key's requests to its objects in
 * turn, starting from a random object, so every object sees its share of the traffic
 * wherever the requests land. What is traded: a refusal means this request's object is
 * spent, not every object, so requests dealt unevenly across isolates can be refused a
 * little before the whole limit is used; each object's burst (one minute of its share)
 * absorbs the unevenness of ordinary traffic (docs/assumptions.md, "Rate limiting at a
 * caller's scale").
 *
 * @param key - what is counted: `caller/<name>` or `webhooks:<client>`.
 * @param limit - requests per minute for the whole key, a positive integer.
 * @param perObject - the most requests per minute one object is given
 *   (`RATE_LIMIT_PER_OBJECT_PER_MINUTE`), a positive integer.
 * @returns the object to ask and the limit to ask it with.
 *
 * @example
 * ```ts
 * nextShare('caller/reporting', 90_000, 30_000); // { name: 'caller/reporting/2-of-3', limit: 30000 }
 * ```
 */
export function nextShare(key: string, limit: number, perObject: number): LimiterShare {
  const count = Math.ceil(limit / perObject);
  if (count <= 1) return { name: key, limit };
  const index = nextTurn(key, count);
  const base = Math.floor(limit / count);
  return {
    name: `${key}/${index + 1}-of-${count}`,
    limit: base + (index < limit % count ? 1 : 0),
  };
}

// In turn, per key, from a random first object: a counter shared by every key would give a
// key whose requests alternate with another's only every other object.
function nextTurn(key: string, count: number): number {
  let turn = turns.get(key);
  if (turn === undefined) {
    if (turns.size >= MAX_REMEMBERED_KEYS) turns.clear();
    turn = Math.floor(Math.random() * count);
  }
  turns.set(key, (turn + 1) % count);
  return turn % count;
}
