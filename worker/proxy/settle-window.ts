// How long an idempotency claim is held: its lock while a request runs, and the settle
// window after an ambiguous response of a money POST (an upstream 5xx, a connection closed
// before or during the response, the gateway's own timeout). A payment service can commit a
// request seconds after its load balancer answered 502/503/504 or the connection dropped,
// and its reads can lag its writes: a lookup made at once can miss a record that is about
// to exist, and the resend that follows would move the money twice.
import { parseRetryAfter } from '../../lib/shared.ts';
import type { Settings } from '../config.ts';

/**
 * The lock of a new or taken-over claim: the larger of `IDEMPOTENCY_LOCK_TIMEOUT_SEC` and
 * twice `UPSTREAM_TIMEOUT_MS`, since a holder may spend a lookup and a send (each up to the
 * upstream timeout) before it stores a response.
 *
 * @param settings - the gateway's settings.
 * @returns the lock's length in milliseconds (60 000 with the defaults).
 */
export function claimLockMs(settings: Settings): number {
  return Math.max(settings.idempotency.lockTimeoutSec * 1000, 2 * settings.upstream.timeoutMs);
}

/**
 * The settle window after an ambiguous response of a money POST: how long the claim stays
 * locked before a retry with the key may look the record up and, finding nothing, resend.
 * It is `UPSTREAM_TIMEOUT_MS` (a request the service accepted is committed, or given up,
 * within the time the gateway waits for a response), or the upstream's `Retry-After` when
 * that asks for longer, capped at the claim's lock ({@link claimLockMs}) so a response
 * asking for hours cannot hold a key that long.
 *
 * @param settings - the gateway's settings.
 * @param retryAfter - the upstream's `Retry-After` (delay-seconds or an HTTP-date), `null`
 *   when there was none or no response at all.
 * @param now - epoch milliseconds, to read an HTTP-date against.
 * @returns the window in milliseconds, from `UPSTREAM_TIMEOUT_MS` up to the lock.
 */
export function settleWindowMs(settings: Settings, retryAfter: string | null, now: number): number {
  const askedSec = parseRetryAfter(retryAfter, now);
  const askedMs = askedSec === undefined ? 0 : askedSec * 1000;
  return Math.min(Math.max(settings.upstream.timeoutMs, askedMs), claimLockMs(settings));
}

/**
 * The lock's part in whether the write storing a held claim's response may run after the
 * caller has the answer (in `waitUntil`), sparing the caller a storage round trip: only while
 * the lock has at least `UPSTREAM_TIMEOUT_MS` left. Until the write lands, a retry with the
 * key finds the claim still locked and is answered 409 in flight; a write that has not
 * landed by the lock's end is taken as lost, and the stale claim is recovered by looking
 * the record up, never by resending blind. Nearer the lock's end the caller waits for it.
 *
 * @param settings - the gateway's settings.
 * @param lockedUntil - the held lock's end, epoch milliseconds.
 * @param now - epoch milliseconds.
 */
export function mayDeferCompletion(settings: Settings, lockedUntil: number, now: number): boolean {
  return lockedUntil - now >= settings.upstream.timeoutMs;
}
