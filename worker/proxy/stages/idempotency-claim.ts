// What the idempotency stage does with a claim it holds: store the response (after the
// caller has it), release the key, hand the lock back stale or locked for a settle window,
// and the responses it gives (a replay byte for byte, 409 in flight with `Retry-After`).
// Only the stored response may wait: a release or a settle window must be stored before the
// caller can retry, or a retry could find the claim stale too early and resend.

import { settingsIn } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import type { StoredResponse } from '../../objects/idempotency-keys.ts';
import { FORWARDED_RESPONSE_HEADERS } from '../forward.ts';
import type { ProxyExchange } from '../pipeline.ts';
import { mayDeferCompletion, settleWindowMs } from '../settle-window.ts';
import { heldClaim, type IdempotencyLock } from './idempotency-store.ts';

// Stored and replayed: what forward.ts passes back, and its `Cache-Control: no-store` on errors.
const STORED_HEADERS = [...FORWARDED_RESPONSE_HEADERS, 'cache-control'];

/**
 * Stores the response under the held lock and gives it back. The caller does not wait for
 * the write when a lost write would cost nothing but a recovered answer (see
 * `mayDeferStore`): it runs in `waitUntil`, so the claim is the request's only storage
 * round trip. Either way the response stands when the store fails to record it (logged; the claim then
 * stays in flight and is recovered once its lock runs out, as when the isolate dies before
 * the write lands).
 *
 * @param outcome - what the access log records when the response is stored (also when it
 *   was handed to `waitUntil`, whose failure is logged on its own line).
 * @returns the stored response as a response.
 */
export async function storeResponse(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  stored: StoredResponse,
  outcome: 'stored' | 'recovered',
): Promise<Response> {
  const write = bestEffort(exchange, lock.store.complete(heldClaim(lock), stored));
  if (mayDeferStore(exchange, lock, stored)) {
    exchange.waitUntil(write);
    exchange.context.idempotency = outcome;
  } else {
    exchange.context.idempotency = (await write) ? outcome : 'none';
  }
  return responseOf(stored, {});
}

// Whether the caller may have its answer before the write storing it lands: only a 2xx of
// a route whose lookup rebuilds the answer from the record its body names, while the lock
// has time left (`mayDeferCompletion`). A write lost with the isolate then ends as a stale
// claim answered from the same record looked up, never resent blind. Elsewhere a lost
// write would leave a key that can never answer again (a payment session, a route with
// nothing to look up) or would be resent (an error answer, a route that moves no money):
// there the caller waits for it.
function mayDeferStore(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  stored: StoredResponse,
): boolean {
  const lookup = exchange.route.endpoint.lookup;
  if (lookup === undefined || lookup.recover === null) return false;
  if (stored.status < 200 || stored.status >= 300) return false;
  const reference = exchange.content?.value[lookup.field];
  if (typeof reference !== 'string' || reference === '') return false;
  return mayDeferCompletion(settingsIn(exchange.context), lock.lockedUntil, Date.now());
}

/** Nothing was processed (refused credentials, a rate limit, the gateway's own fault): frees the key. */
export async function releaseClaim(exchange: ProxyExchange, lock: IdempotencyLock): Promise<void> {
  exchange.context.idempotency = 'none';
  await bestEffort(exchange, lock.store.release(heldClaim(lock)));
}

/**
 * Stores nothing and hands the lock back stale at once: the next request with the key
 * verifies again, so it gets the same response and nothing is ever sent twice.
 */
export async function keepStale(exchange: ProxyExchange, lock: IdempotencyLock): Promise<void> {
  await bestEffort(exchange, lock.store.expireLock(heldClaim(lock), Date.now()));
  exchange.context.idempotency = 'in_flight';
}

/**
 * Stores nothing and keeps the claim locked for the settle window
 * (`settleWindowMs`): the request may still be committed upstream, or be committed
 * but not readable yet, so no lookup may decide to resend before the window is over.
 *
 * @param retryAfter - the upstream's `Retry-After`, `null` without one.
 * @returns the window in milliseconds (for a `Retry-After` of its own).
 */
export async function holdForSettleWindow(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  retryAfter: string | null,
): Promise<number> {
  const now = Date.now();
  const windowMs = settleWindowMs(settingsIn(exchange.context), retryAfter, now);
  await bestEffort(exchange, lock.store.settleLock(heldClaim(lock), now + windowMs));
  return windowMs;
}

// A write of the stage that may fail without failing the response: logged, reported.
async function bestEffort(exchange: ProxyExchange, write: Promise<boolean>): Promise<boolean> {
  const { requestId } = exchange.context;
  try {
    if (await write) return true;
    logEvent('warn', 'idempotency_lock_lost', {
      request_id: requestId,
      route: exchange.route.name,
    });
  } catch (error) {
    logEvent('error', 'idempotency_write_failed', {
      request_id: requestId,
      route: exchange.route.name,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
  return false;
}

/** The status, kept headers and exact body bytes of a response, to store. */
export async function storedOf(response: Response): Promise<StoredResponse> {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

/** The same bytes for the first response and every replay, with `extra` headers set. */
export function responseOf(stored: StoredResponse, extra: Record<string, string>): Response {
  const headers = new Headers(stored.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  const empty = stored.body.byteLength === 0 || [101, 204, 205, 304].includes(stored.status);
  return new Response(empty ? null : stored.body.slice(), { status: stored.status, headers });
}

/** 409 `idempotency_key_in_flight` with `Retry-After` in whole seconds (at least 1). */
export function inFlight(message: string, retryAfterMs: number): HttpError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new HttpError(409, 'idempotency_key_in_flight', message, {
    headers: { 'Retry-After': String(seconds) },
  });
}
