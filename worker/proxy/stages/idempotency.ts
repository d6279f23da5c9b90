import { bytesToHex } from '../../../lib/shared.ts';
import { type RequestContext, settingsIn } from '../../http/context.ts';
import { HttpError, InternalError, UpstreamTimeoutError } from '../../http/errors.ts';
import type { IdempotencyKeyRecord } from '../../objects/idempotency-keys.ts';
import type { ProxyRoute } from '../../routes/route.ts';
import type { ProxyExchange, ProxyNext, ProxyStage } from '../pipeline.ts';
import { claimLockMs } from '../settle-window.ts';
import {
  holdForSettleWindow,
  inFlight,
  keepStale,
  releaseClaim,
  responseOf,
  storedOf,
  storeResponse,
} from './idempotency-claim.ts';
import {
  isDuplicateReference,
  lookUpRecord,
  reconcileDuplicate,
  responseFromRecord,
} from './idempotency-record.ts';
import { type IdempotencyLock, keyStore } from './idempotency-store.ts';

/** The request header naming the key (draft-ietf-httpapi-idempotency-key-header). */
const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set to `true` on a stored response replayed for a repeated key. */
const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** Longest key accepted, in characters. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** `Retry-After` (seconds) when a stale claim's outcome could not be verified upstream. */
const VERIFY_RETRY_AFTER_SEC = 1;

// An sf-string (RFC 8941) as the draft sends it: "…" with \" and \\ escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/;
const PRINTABLE = /^[\x20-\x7E]+$/;
// Statuses saying the upstream did not process the request (refused credentials or
// permissions, a timeout before processing, a rate limit): the key is released so a retry
// after the fix is sent, instead of replaying the refusal for the whole retention.
const NOT_PROCESSED = new Set([401, 403, 408, 429]);

/**
 * The proxy stage for `Idempotency-Key`: claims the key per
 * caller in the Durable Object holding it (./idempotency-store.ts), runs the request once,
 * stores and replays its response (a success of a route whose record lookup can rebuild it
 * is stored after the caller has it, so the claim is the only storage round trip the
 * caller waits for), answers 422 for
 * another request under the same key and 409 while the first is in flight, and recovers
 * a stale claim by looking the record up upstream before resending. After an ambiguous
 * answer of a money POST (an upstream 5xx, no response, a timeout) the claim stays locked
 * for the settle window (`settleWindowMs`) before any lookup may decide to resend, and a
 * resend refused as a duplicate reference is answered from the record looked up again.
 *
 * @param route - the route being proxied.
 * @returns the stage, or `undefined` on routes that take no key (reads).
 * @throws {HttpError} 400 `idempotency_key_missing` / `validation_failed`, 422
 *   `idempotency_key_reused`, 409 `idempotency_key_in_flight` with `Retry-After`.
 */
export function idempotencyStage(route: ProxyRoute): ProxyStage | undefined {
  if (route.idempotency === 'none') return undefined;
  const canTakeOver = route.endpoint.lookup !== undefined || route.idempotency === 'optional';
  return async (exchange, next) => {
    const { context, env } = exchange;
    const key = readIdempotencyKey(exchange.request.headers, route);
    if (key === undefined) {
      context.idempotency = 'none';
      return next();
    }
    if (context.caller === undefined) throw new InternalError('idempotency without a caller');
    const settings = settingsIn(context);
    const lockMs = claimLockMs(settings);
    const retentionMs = settings.idempotency.retentionSec * 1000;
    const target = exchange.path + exchange.search;
    const fingerprint = await requestFingerprint(route.method, target, exchange.body);
    const store = await keyStore(env, context.caller, key);
    const now = Date.now();
    const lock = { caller: context.caller, key, lockedUntil: now + lockMs, store };
    const outcome = await store.claim({
      caller: context.caller,
      key,
      fingerprint,
      now,
      lockedUntil: lock.lockedUntil,
      expiresAt: now + retentionMs,
      takeOverStale: canTakeOver,
    });
    if (outcome.kind === 'claimed') return runOnce(exchange, next, lock, 'stored');
    if (outcome.kind === 'taken_over') return recover(exchange, next, lock);
    return respondExisting(context, outcome.record, fingerprint, now, lockMs);
  };
}

/**
 * The fingerprint of a request: method, path with query, and the SHA-256 of the body bytes.
 *
 * @param method - the request method.
 * @param target - the path as received, with its query string.
 * @param body - the exact body bytes (`undefined` hashes as empty).
 * @returns `METHOD target sha256hex`.
 *
 * @internal Exported for the tests, which call it directly.
 */
export async function requestFingerprint(
  method: string,
  target: string,
  body: Uint8Array | undefined,
): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', body ?? new Uint8Array());
  return `${method} ${target} ${bytesToHex(new Uint8Array(digest))}`;
}

function readIdempotencyKey(headers: Headers, route: ProxyRoute): string | undefined {
  const raw = headers.get(IDEMPOTENCY_KEY_HEADER);
  if (raw === null) {
    if (route.idempotency !== 'required') return undefined;
    throw new HttpError(
      400,
      'idempotency_key_missing',
      `${route.method} ${route.pattern} needs an ${IDEMPOTENCY_KEY_HEADER} header`,
    );
  }
  const key = SF_STRING.exec(raw)?.[1]?.replace(/\\(["\\])/g, '$1') ?? raw;
  const problem =
    key.length > MAX_IDEMPOTENCY_KEY_LENGTH
      ? `Must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`
      : PRINTABLE.test(key)
        ? undefined
        : 'Must be a non-empty string of printable ASCII characters';
  if (problem === undefined) return key;
  throw new HttpError(400, 'validation_failed', 'The request is invalid', {
    issues: [{ path: IDEMPOTENCY_KEY_HEADER, message: problem }],
  });
}

function respondExisting(
  context: RequestContext,
  record: IdempotencyKeyRecord,
  fingerprint: string,
  now: number,
  lockMs: number,
): Response {
  if (record.fingerprint !== fingerprint) {
    context.idempotency = 'reused';
    throw new HttpError(
      422,
      'idempotency_key_reused',
      `${IDEMPOTENCY_KEY_HEADER} was already used with another request`,
    );
  }
  if (record.response !== undefined) {
    context.idempotency = 'replayed';
    return responseOf(record.response, { [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
  }
  context.idempotency = 'in_flight';
  if (record.lockedUntil > now) {
    throw inFlight(
      'A request with this key is still in flight, or its outcome is settling upstream',
      record.lockedUntil - now,
    );
  }
  // Stale, and this route has no way to verify the outcome: never risk a duplicate.
  throw inFlight(
    'The first request with this key did not finish and its outcome cannot be verified; check the record, then retry with a new key',
    lockMs,
  );
}

// Runs the request under a held claim and settles the claim with its response.
async function runOnce(
  exchange: ProxyExchange,
  next: ProxyNext,
  lock: IdempotencyLock,
  outcome: 'stored' | 'recovered',
): Promise<Response> {
  let response: Response;
  try {
    response = await next();
  } catch (error) {
    // Nothing left the gateway on its own faults (settings, signing secret); after a
    // timeout or a lost connection the upstream may still commit the request.
    if (error instanceof InternalError) await releaseClaim(exchange, lock);
    else await leaveAmbiguous(exchange, lock, null, error instanceof UpstreamTimeoutError);
    throw error;
  }
  if (NOT_PROCESSED.has(response.status)) {
    await releaseClaim(exchange, lock);
    return response;
  }
  if (response.status >= 500) {
    await leaveAmbiguous(exchange, lock, response.headers.get('retry-after'), false);
    return response;
  }
  // A resend after a lookup found nothing, refused because the reference exists: the first
  // request did land, and its record was not readable yet. Never the key's final response.
  const looksUp = exchange.route.endpoint.lookup !== undefined;
  if (outcome === 'recovered' && looksUp && (await isDuplicateReference(response))) {
    return reconcileDuplicate(exchange, lock);
  }
  return storeResponse(exchange, lock, await storedOf(response), outcome);
}

// The outcome is unknown (an upstream 5xx, no response, the gateway's timeout). A money
// POST keeps its claim locked for the settle window, so no retry looks the record up
// before the upstream can have committed it. Other keyed requests move no money and are
// resent without a lookup: their claim goes stale at once, except after a timeout, when
// it stays locked until its lock runs out.
async function leaveAmbiguous(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  retryAfter: string | null,
  timedOut: boolean,
): Promise<void> {
  if (exchange.route.idempotency === 'required') {
    await holdForSettleWindow(exchange, lock, retryAfter);
  } else if (!timedOut) {
    await keepStale(exchange, lock);
  }
  exchange.context.idempotency = 'none';
}

// Verify before resend: the stale claim is now ours (its settle window, if any, is over);
// find out whether the request landed before sending it again.
async function recover(
  exchange: ProxyExchange,
  next: ProxyNext,
  lock: IdempotencyLock,
): Promise<Response> {
  const found = await lookUpRecord(exchange);
  switch (found.kind) {
    case 'found':
      return responseFromRecord(exchange, lock, found);
    case 'absent':
      return runOnce(exchange, next, lock, 'recovered');
    case 'unknown':
      return unverified(exchange, lock);
    case 'impossible':
      // Only routes that move no money are taken over without a lookup.
      if (exchange.route.idempotency === 'optional') {
        return runOnce(exchange, next, lock, 'recovered');
      }
      return unverified(exchange, lock);
  }
}

// The stale claim's outcome is unknown: hand the lock back (stale at once) and say so.
async function unverified(exchange: ProxyExchange, lock: IdempotencyLock): Promise<never> {
  await keepStale(exchange, lock);
  throw inFlight(
    'The first request with this key did not finish and its outcome could not be verified yet',
    VERIFY_RETRY_AFTER_SEC * 1000,
  );
}
