/**
 * When a failed delivery is tried again: the schedule 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h with ±20% jitter (so failed deliveries do not all come back at once), and
 * the subscriber's `Retry-After` as a lower bound, never past the Queues maximum delay
 * of 12 h.
 */

/**
 * Delay before retry n (index n - 1), in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const RETRY_DELAYS_SEC: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

/**
 * Attempts a delivery gets before it is dead-lettered: the first plus one per scheduled
 * retry. A subscription's outbox dead-letters a delivery after its last one; wrangler.toml's
 * `max_retries = 7` bounds the queue's own retries of a handover the same way.
 */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_SEC.length + 1;

/**
 * Share of the delay added or removed at random (±20%).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const RETRY_JITTER = 0.2;

/**
 * The longest a delivery's retries can take by the schedule, from its first attempt to its
 * last, in seconds: every delay at its jitter's longest (about 33 h). A subscriber's
 * `Retry-After` may stretch it further.
 */
export const RETRY_SPAN_SEC = Math.ceil(
  RETRY_DELAYS_SEC.reduce((sum, delay) => sum + delay, 0) * (1 + RETRY_JITTER),
);

/** Longest `delaySeconds` Cloudflare Queues accepts: 12 h, in seconds. */
export const MAX_QUEUE_DELAY_SEC = 12 * 60 * 60;

/**
 * The jittered delay after a failed attempt.
 *
 * @param attempts - the failed attempt's number (`message.attempts`, 1 for the first);
 *   past the schedule the last delay repeats.
 * @param random - a number in [0, 1), `Math.random` by default (tests pass fixed values).
 * @returns seconds, a whole number within ±20% of the scheduled delay.
 *
 * @internal Exported for the tests, which call it directly.
 */
export function scheduledRetryDelay(attempts: number, random: () => number = Math.random): number {
  const index = Math.min(Math.max(Math.floor(attempts), 1), RETRY_DELAYS_SEC.length) - 1;
  const base = RETRY_DELAYS_SEC[index] ?? 0;
  const factor = 1 + RETRY_JITTER * (2 * random() - 1);
  return Math.round(base * factor);
}

/**
 * The `delaySeconds` to retry a delivery with: the jittered schedule, raised to the
 * subscriber's `Retry-After` when that asks for longer (it says "not before"), capped at
 * {@link MAX_QUEUE_DELAY_SEC}.
 *
 * @param attempts - the failed attempt's number (`message.attempts`).
 * @param retryAfterSec - the parsed `Retry-After`, if any, in seconds.
 * @param random - a number in [0, 1) for the jitter. @default Math.random
 * @returns seconds.
 *
 * @example
 * ```ts
 * message.retry({ delaySeconds: retryDelay(message.attempts, parseRetryAfter(header, Date.now())) });
 * ```
 */
export function retryDelay(
  attempts: number,
  retryAfterSec: number | undefined,
  random: () => number = Math.random,
): number {
  const scheduled = scheduledRetryDelay(attempts, random);
  return Math.min(Math.max(scheduled, retryAfterSec ?? 0), MAX_QUEUE_DELAY_SEC);
}
