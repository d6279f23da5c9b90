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

/**
 * How long concurrent sign-ins with one credential may share its reservation, in
 * milliseconds: far longer than a comparison takes, short enough that a reservation left
 * behind by a request that died is soon forgotten.
 */
const RESERVATION_SHARED_MS = 60_000;

/** One failed sign-in reserved for a credential, and the requests holding it. */
interface SharedReservation {
  /** Requests that reserved it and have not released it yet. */
  holders: number;
  /** When the first of them reserved it, in epoch milliseconds. */
  readonly since: number;
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
  /** The sign-in reservations in flight, by credential; in memory, see {@link release}. */
  private readonly reservations = new Map<string, SharedReservation>();

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
   * Reserves one failed sign-in for `credential` (a digest of the presented token), when
   * it is allowed: a reservation counted by {@link take} that the sign-in later keeps
   * (the token was wrong) or gives back (it was right) with {@link release}. Concurrent
   * requests presenting the same credential share one reservation: only the first is
   * counted, the others join it and are allowed, since a comparison of a token already
   * being compared tells nothing new. So the right token, sent by many requests at once (a
   * console's parallel reads), holds one slot however many are in flight, and is refused
   * only by failures; distinct guesses still take a slot each. A reservation is shared for
   * at most {@link RESERVATION_SHARED_MS}: one whose requests never released it (their
   * isolate died) is then forgotten, its slot still counted.
   *
   * @param limit - failed sign-ins per minute, a positive integer.
   * @param credential - identifies the presented token (a digest; never the token itself).
   * @returns whether the sign-in may be compared and, when not, the wait in milliseconds.
   */
  reserve(limit: number, credential: string): RateLimitDecision {
    const now = Date.now();
    this.forgetStaleReservations(now);
    const shared = this.reservations.get(credential);
    if (shared !== undefined) {
      shared.holders += 1;
      return { allowed: true, retryAfterMs: 0 };
    }
    const decision = this.take(limit);
    if (decision.allowed) this.reservations.set(credential, { holders: 1, since: now });
    return decision;
  }

  /**
   * Ends one request's hold on the reservation of `credential` made by {@link reserve}.
   * When the last holder releases it, the slot is given back if `outcome` is `refund` (the
   * token was right) and stays counted if it is `keep` (a failed sign-in). A reservation
   * this object no longer knows (it restarted, or forgot it as stale) gives nothing back:
   * the count is only ever higher than it should be, never lower. A refund never gives
   * back more than was taken: a schedule that has meanwhile fallen behind now is as good
   * as empty either way.
   *
   * @param limit - the same `limit` as the `reserve` it releases.
   * @param credential - the same credential as the `reserve` it releases.
   * @param outcome - `refund` to give the slot back, `keep` to count it.
   */
  release(limit: number, credential: string, outcome: 'refund' | 'keep'): void {
    const shared = this.reservations.get(credential);
    if (shared === undefined) return;
    shared.holders -= 1;
    if (shared.holders > 0) return;
    this.reservations.delete(credential);
    if (outcome === 'keep') return;
    const stored = this.ctx.storage.kv.get<number>(TAT_KEY);
    if (stored === undefined) return;
    this.ctx.storage.kv.put(TAT_KEY, stored - RATE_LIMIT_WINDOW_MS / limit);
  }

  private forgetStaleReservations(now: number): void {
    for (const [credential, shared] of this.reservations) {
      if (now - shared.since > RESERVATION_SHARED_MS) this.reservations.delete(credential);
    }
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
