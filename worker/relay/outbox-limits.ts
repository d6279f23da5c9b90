/**
 * The pace of a subscription's outbox (worker/relay/subscriber-outbox.ts): its subscription's
 * `max_in_flight` and `max_per_second`, and the subscriber's own back-pressure, a
 * `Retry-After` on a 429 or 503 that postpones its next attempt, whichever delivery it is.
 * The gate (when the next attempt may start) is kept in the object's storage, so a restart
 * neither bursts past the rate nor forgets a pause. Every time is epoch milliseconds.
 */
import { parseRetryAfter } from '../../lib/shared.ts';
import type { SubscriptionLimits } from '../db/subscriptions.ts';
import type { DeliveryAttemptResult } from './settle-delivery.ts';

/** Attempts one subscription's outbox makes at once when its `max_in_flight` is not set. */
const DEFAULT_MAX_IN_FLIGHT = 10;

/** Longest pause a subscriber's `Retry-After` may ask, in seconds (12 h, as a retry delay). */
const MAX_PAUSE_SEC = 12 * 60 * 60;

/** What an outbox applies to its subscription's attempts. */
export interface OutboxLimits {
  /** Most attempts out at once. */
  readonly maxInFlight: number;
  /** Least time between two attempts starting, in ms; `null` = no rate limit. */
  readonly intervalMs: number | null;
  /** The events of one reference go in the provider's order (`ordered`). */
  readonly ordered: boolean;
}

/**
 * The limits of a subscription: its `max_in_flight` (else {@link DEFAULT_MAX_IN_FLIGHT}),
 * its `max_per_second` as the time between two starts, and `ordered`.
 *
 * @param subscription - the stored limits; `undefined` (gone) takes the defaults.
 */
export function limitsOf(subscription: SubscriptionLimits | undefined): OutboxLimits {
  const perSecond = subscription?.maxPerSecond ?? null;
  return {
    maxInFlight: subscription?.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    intervalMs: perSecond === null || perSecond <= 0 ? null : Math.ceil(1000 / perSecond),
    ordered: subscription?.ordered ?? false,
  };
}

/**
 * When a subscriber's answer asks the outbox to pause: a 429 or 503 with a `Retry-After`
 * (seconds or an HTTP date), capped at 12 h.
 *
 * @param result - what the attempt came to.
 * @returns the time attempts may start again, or `null` when the answer asks no pause.
 */
export function pauseUntil(result: DeliveryAttemptResult): number | null {
  if (result.kind !== 'sent') return null;
  const { status, retryAfter } = result.sendResult;
  if (status !== 429 && status !== 503) return null;
  const seconds = parseRetryAfter(retryAfter, result.settledAt);
  if (seconds === undefined) return null;
  return result.settledAt + Math.min(seconds, MAX_PAUSE_SEC) * 1000;
}

const PAUSED_UNTIL = 'paused_until';
const NEXT_START_AT = 'next_start_at';

/**
 * The gate of an outbox, in its synchronous key-value storage: the pause a subscriber asked
 * for and the earliest start its rate allows.
 */
export class OutboxGate {
  readonly #kv: SyncKvStorage;

  constructor(kv: SyncKvStorage) {
    this.#kv = kv;
  }

  /** When the next attempt may start (0 when now). */
  openAt(): number {
    return Math.max(
      this.#kv.get<number>(PAUSED_UNTIL) ?? 0,
      this.#kv.get<number>(NEXT_START_AT) ?? 0,
    );
  }

  /** Counts an attempt starting at `now` against the rate (no-op without one). */
  take(now: number, intervalMs: number | null): void {
    if (intervalMs === null) return;
    const next = Math.max(this.#kv.get<number>(NEXT_START_AT) ?? 0, now) + intervalMs;
    this.#kv.put(NEXT_START_AT, next);
  }

  /** Postpones every attempt until `until`, unless a longer pause holds already. */
  pause(until: number): void {
    if (until > (this.#kv.get<number>(PAUSED_UNTIL) ?? 0)) this.#kv.put(PAUSED_UNTIL, until);
  }
}
