import { APIError, lookupMismatches, NotFoundError } from '../../../lib/index.ts';
import { bytesToHex } from '../../../lib/shared.ts';
import { settingsOf } from '../../config.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  expireIdempotencyLock,
  type IdempotencyKeyRecord,
  type IdempotencyLock,
  releaseIdempotencyKey,
  type StoredResponse,
} from '../../db/idempotency-keys.ts';
import type { RequestContext } from '../../http/context.ts';
import { HttpError, InternalError, UpstreamTimeoutError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import type { ProxyRoute } from '../../routes/table.ts';
import { upstreamClient } from '../../upstream/sdk.ts';
import { FORWARDED_RESPONSE_HEADERS } from '../forward.ts';
import type { ProxyExchange, ProxyNext, ProxyStage } from '../pipeline.ts';
import { recoveredAnswer } from '../recovered-answer.ts';

/** The request header naming the key (draft-ietf-httpapi-idempotency-key-header). */
const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set to `true` on a stored answer replayed for a repeated key. */
const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** Set to `true` on an answer built from the upstream record after a stale claim (verify before resend). */
const IDEMPOTENT_RECOVERED_HEADER = 'Idempotent-Recovered';
/** Longest key accepted, in characters. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** `Retry-After` (seconds) when a stale claim's outcome could not be verified upstream. */
const VERIFY_RETRY_AFTER_SEC = 1;

// An sf-string (RFC 8941) as the draft sends it: "…" with \" and \\ escapes.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/;
const PRINTABLE = /^[\x20-\x7E]+$/;
// Stored and replayed: what forward.ts passes back, and its `Cache-Control: no-store` on errors.
const STORED_HEADERS = [...FORWARDED_RESPONSE_HEADERS, 'cache-control'];
// Statuses saying the upstream did not process the request (refused credentials or
// permissions, a timeout before processing, a rate limit): the key is released so a retry
// after the fix is sent, instead of replaying the refusal for the whole retention.
const NOT_PROCESSED = new Set([401, 403, 408, 429]);

/**
 * The proxy stage for `Idempotency-Key`: claims the key per
 * caller in D1, runs the request once, stores and replays its answer, answers 422 for
 * another request under the same key and 409 while the first is in flight, and recovers
 * a stale claim by looking the record up upstream before resending.
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
    const settings = settingsOf(env);
    // A holder may spend a lookup and a send before settling: the lock outlasts both.
    const lockMs = Math.max(
      settings.idempotency.lockTimeoutSec * 1000,
      2 * settings.upstream.timeoutMs,
    );
    const retentionMs = settings.idempotency.retentionSec * 1000;
    const target = exchange.path + exchange.search;
    const fingerprint = await requestFingerprint(route.method, target, exchange.body);
    const now = Date.now();
    const outcome = await claimIdempotencyKey(env.DB, {
      caller: context.caller,
      key,
      fingerprint,
      now,
      lockedUntil: now + lockMs,
      expiresAt: now + retentionMs,
      takeOverStale: canTakeOver,
    });
    if (outcome.kind === 'claimed') return runOnce(exchange, next, outcome.lock, 'stored');
    if (outcome.kind === 'taken_over') return recover(exchange, next, outcome.lock);
    return answerExisting(context, outcome.record, fingerprint, now, lockMs);
  };
}

/**
 * The fingerprint of a request: method, path with query, and the SHA-256 of the body bytes.
 *
 * @param method - the request method.
 * @param target - the path as received, with its query string.
 * @param body - the exact body bytes (`undefined` hashes as empty).
 * @returns `METHOD target sha256hex`.
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

function answerExisting(
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
    throw inFlight('A request with this key is still in flight', record.lockedUntil - now);
  }
  // Stale, and this route has no way to verify the outcome: never risk a duplicate.
  throw inFlight(
    'The first request with this key did not finish and its outcome cannot be verified; check the record, then retry with a new key',
    lockMs,
  );
}

// Runs the request under a held claim and settles the claim with its answer.
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
    if (error instanceof UpstreamTimeoutError) {
      // The upstream may still be working on it (the request can land after the gateway
      // gave up): a lookup now could miss the record and send it again. The claim stays
      // locked until its lock runs out, and only then is verified before any resend.
      exchange.context.idempotency = 'none';
      throw error;
    }
    // Nothing left the gateway on its own faults (settings, signing secret).
    await leaveUnsettled(exchange, lock, error instanceof InternalError);
    throw error;
  }
  const notProcessed = NOT_PROCESSED.has(response.status);
  if (!notProcessed && response.status < 500) {
    return settle(exchange, lock, await storedOf(response), outcome);
  }
  await leaveUnsettled(exchange, lock, notProcessed);
  return response;
}

// Not processed: free the key. Unknown outcome (5xx, 502/504): keep the claim, stale at
// once, so the next request with the key verifies before resending.
async function leaveUnsettled(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  release: boolean,
): Promise<void> {
  exchange.context.idempotency = 'none';
  const { DB } = exchange.env;
  await bestEffort(
    exchange,
    release ? releaseIdempotencyKey(DB, lock) : expireIdempotencyLock(DB, lock, Date.now()),
  );
}

// The answer stands even when D1 fails to record it: the claim then stays in flight
// and is recovered (verify before resend) once its lock runs out.
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

// Verify before resend: the stale claim is now ours; find out whether the request landed,
// reading the record through the SDK as the endpoint's lookup says.
async function recover(
  exchange: ProxyExchange,
  next: ProxyNext,
  lock: IdempotencyLock,
): Promise<Response> {
  const { route, context } = exchange;
  const lookup = route.endpoint.lookup;
  const sent = bodyObject(exchange.body);
  const found = lookup === undefined ? undefined : sent?.[lookup.field];
  const reference = typeof found === 'string' && found !== '' ? found : undefined;
  if (lookup === undefined || reference === undefined) {
    // Only routes that move no money are taken over without a lookup.
    if (route.idempotency === 'optional') return runOnce(exchange, next, lock, 'recovered');
    return unverified(exchange, lock);
  }
  let record: unknown;
  try {
    record = await upstreamClient(exchange.env).request(
      lookup.endpoint,
      { params: [reference] },
      { requestId: context.requestId },
    );
  } catch (error) {
    // Anything but a 404 (no answer, an error status, missing settings) leaves the outcome unknown.
    if (error instanceof APIError) context.upstreamStatus = error.status;
    if (error instanceof NotFoundError) return runOnce(exchange, next, lock, 'recovered');
    return unverified(exchange, lock);
  }
  context.upstreamStatus = 200;
  // The reference alone proves nothing: another request may have used it for other money.
  const mismatches = lookupMismatches(lookup, sent ?? {}, record);
  const answer = recoveredAnswer(route.name, record);
  logEvent(mismatches.length === 0 ? 'info' : 'warn', 'idempotency_recovered', {
    request_id: context.requestId,
    route: route.name,
    lookup_status: 200,
    ...(mismatches.length === 0 ? {} : { mismatched_fields: mismatches }),
  });
  if (mismatches.length > 0) {
    await keepStale(exchange, lock);
    throw new HttpError(
      409,
      'idempotency_record_mismatch',
      `${lookup.field} ${reference} already names a record whose ${mismatches.join(', ')} ` +
        'differ from this request; nothing was sent. Use a new reference and a new key',
    );
  }
  if (answer === undefined) {
    await keepStale(exchange, lock);
    throw new HttpError(
      409,
      'idempotency_answer_lost',
      `The request with this key was carried out (${lookup.field} ${reference}) but its answer ` +
        'was lost and cannot be rebuilt from the record; start over with a new reference and a new key',
    );
  }
  const headers = {
    'content-type': 'application/json',
    [IDEMPOTENT_RECOVERED_HEADER.toLowerCase()]: 'true',
  };
  const body = new TextEncoder().encode(JSON.stringify(answer));
  return settle(exchange, lock, { status: 200, headers, body }, 'recovered');
}

// The JSON body the proxy already validated, as an object (`undefined` without one).
function bodyObject(body: Uint8Array | undefined): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function settle(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  stored: StoredResponse,
  outcome: 'stored' | 'recovered',
): Promise<Response> {
  const written = await bestEffort(exchange, completeIdempotencyKey(exchange.env.DB, lock, stored));
  exchange.context.idempotency = written ? outcome : 'none';
  return responseOf(stored, {});
}

// The stale claim's outcome is unknown: hand the lock back (stale at once) and say so.
async function unverified(exchange: ProxyExchange, lock: IdempotencyLock): Promise<never> {
  await keepStale(exchange, lock);
  throw inFlight(
    'The first request with this key did not finish and its outcome could not be verified yet',
    VERIFY_RETRY_AFTER_SEC * 1000,
  );
}

// Stores nothing and hands the lock back stale at once: the next request with the key
// verifies again, so it gets the same answer and nothing is ever sent twice.
async function keepStale(exchange: ProxyExchange, lock: IdempotencyLock): Promise<void> {
  await bestEffort(exchange, expireIdempotencyLock(exchange.env.DB, lock, Date.now()));
  exchange.context.idempotency = 'in_flight';
}

async function storedOf(response: Response): Promise<StoredResponse> {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

// The same bytes for the first answer and every replay.
function responseOf(stored: StoredResponse, extra: Record<string, string>): Response {
  const headers = new Headers(stored.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  const empty = stored.body.byteLength === 0 || [101, 204, 205, 304].includes(stored.status);
  return new Response(empty ? null : stored.body.slice(), { status: stored.status, headers });
}

function inFlight(message: string, retryAfterMs: number): HttpError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new HttpError(409, 'idempotency_key_in_flight', message, {
    headers: { 'Retry-After': String(seconds) },
  });
}
