import { DurableObject } from 'cloudflare:workers';

/** Length of the rate-limit window, in milliseconds: limits are per minute. */
const RATE_LIMIT_WINDOW_MS = 60_000;

/** What {@link CallerRateLimiter.take} decided for one request. */
interface RateLimitDecision {
  /** Whether the request may go on. */
  readonly allowed: boolean;
  /** When refused: how long until one more request would be allowed, in milliseconds. */
  readonly retryAfterMs: number;
}

// The theoretical arrival time of the next request (GCRA), in epoch milliseconds.
const TAT_KEY = 'tat';

/**
 * The rate limiter of one caller (`RATE_LIMIT_PER_MINUTE`), and of failed admin sign-ins
 * (one instance per client address, one for the whole gateway): a Durable Object, one
 * instance per name, so everything it limits is counted in one place, strongly consistent
 * (KV, eventually consistent, could not count). Each method runs without awaiting, so
 * concurrent calls to one instance never interleave: a `take` checks and counts at once.
 * It runs the generic cell rate algorithm (GCRA): `limit` requests per minute, a burst of
 * up to `limit`, then one every `60 s / limit`; a refusal knows exactly when the next
 * request fits (`Retry-After`), and is not counted, so a wait is never longer than one
 * interval however many requests were refused. The state survives eviction in the
 * object's SQLite-backed storage.
 *
 * @example
 * ```ts
 * const decision = await env.RATE_LIMITER.getByName('reporting').take(120);
 * ```
 */
export class CallerRateLimiter extends DurableObject {
  /**
   * Counts one request against `limit` requests per minute, when it is allowed.
   *
   * @param limit - requests per minute, a positive integer (RATE_LIMIT_PER_MINUTE).
   * @returns whether it is allowed and, when not, the wait in milliseconds.
   */
  take(limit: number): RateLimitDecision {
    const decision = this.decide(limit);
    if (decision.allowed) this.ctx.storage.kv.put(TAT_KEY, decision.next);
    return { allowed: decision.allowed, retryAfterMs: decision.retryAfterMs };
  }

  /**
   * Gives back one request counted by {@link take}: for reservations that turned out not
   * to count, such as an admin sign-in reserved before its token was compared and refunded
   * when the token was right. A refund never gives back more than was taken: a schedule
   * that has meanwhile fallen behind now is as good as empty either way.
   *
   * @param limit - the same `limit` as the `take` it refunds.
   */
  refund(limit: number): void {
    const stored = this.ctx.storage.kv.get<number>(TAT_KEY);
    if (stored === undefined) return;
    this.ctx.storage.kv.put(TAT_KEY, stored - RATE_LIMIT_WINDOW_MS / limit);
  }

  private decide(limit: number): RateLimitDecision & { next: number } {
    const now = Date.now();
    const interval = RATE_LIMIT_WINDOW_MS / limit;
    const stored = this.ctx.storage.kv.get<number>(TAT_KEY);
    const next = Math.max(stored ?? now, now) + interval;
    // Allowed while the schedule runs at most one window ahead of now (the burst).
    const excess = next - now - RATE_LIMIT_WINDOW_MS;
    return { allowed: excess <= 0, retryAfterMs: Math.max(0, excess), next };
  }
}
