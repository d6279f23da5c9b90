// Verify before resend: the record a money POST creates, looked up by its merchant
// reference through the SDK as the endpoint's lookup says, and the response rebuilt from it.
import { APIError, type Lookup, lookupMismatches, NotFoundError } from '../../../lib/index.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import type { StoredResponse } from '../../objects/idempotency-keys.ts';
import { upstreamClient } from '../../upstream/sdk.ts';
import type { ProxyExchange } from '../pipeline.ts';
import { holdForSettleWindow, inFlight, keepStale, storeResponse } from './idempotency-claim.ts';
import type { IdempotencyLock } from './idempotency-store.ts';

/** Set to `true` on a response built from the upstream record after a stale claim (verify before resend). */
const IDEMPOTENT_RECOVERED_HEADER = 'Idempotent-Recovered';

// How a payment service refuses a second creation under a merchant reference it already
// has: 409 with the code `duplicate_reference`, or for refunds the spec's
// "Refund already exists" (code `refund_already_exists` here, only the message elsewhere).
const DUPLICATE_CODES: ReadonlySet<string> = new Set([
  'duplicate_reference',
  'refund_already_exists',
]);
const DUPLICATE_MESSAGE = /^refund already exists$/i;

/** What looking the request's record up found. */
export type RecordLookup =
  /** The service has a record under `reference` (`record` normalized by the SDK). */
  | {
      readonly kind: 'found';
      readonly lookup: Lookup;
      readonly reference: string;
      readonly record: unknown;
    }
  /** The lookup answered 404: no record as far as the service's reads show. */
  | { readonly kind: 'absent' }
  /** No response, or another error status: the outcome is still unknown. */
  | { readonly kind: 'unknown' }
  /** The route has no lookup, or the body names no reference: nothing to look up. */
  | { readonly kind: 'impossible' };

/**
 * Looks the record of the exchange's request up upstream, by the body field its route's
 * lookup names (`GET /disbursements/verify/:reference` for a transfer), and records the
 * lookup's status for the access log.
 *
 * @param exchange - a money POST whose route may have a lookup.
 * @returns what was found; never throws for an upstream failure (that is `unknown`).
 */
export async function lookUpRecord(exchange: ProxyExchange): Promise<RecordLookup> {
  const { route, context } = exchange;
  const lookup = route.endpoint.lookup;
  const found = lookup === undefined ? undefined : exchange.content?.value[lookup.field];
  if (lookup === undefined || typeof found !== 'string' || found === '') {
    return { kind: 'impossible' };
  }
  try {
    const record = await upstreamClient(exchange.env).request(
      lookup.endpoint,
      { params: [found] },
      { requestId: context.requestId },
    );
    context.upstreamStatus = 200;
    return { kind: 'found', lookup, reference: found, record };
  } catch (error) {
    // Anything but a 404 (no response, an error status, missing settings) leaves the outcome unknown.
    if (error instanceof APIError) context.upstreamStatus = error.status;
    return error instanceof NotFoundError ? { kind: 'absent' } : { kind: 'unknown' };
  }
}

/**
 * The response of a request whose record was found: the POST's own success shape rebuilt
 * from the record with `Idempotent-Recovered: true`, once the record is checked against
 * the request (the reference alone proves nothing: another request may have used it for
 * other money).
 *
 * @param exchange - the money POST.
 * @param found - the record its lookup found.
 * @returns the 200 answer to store, or the error to answer with nothing stored: 409
 *   `idempotency_record_mismatch` (amount, currency or destination differ) or 409
 *   `idempotency_answer_lost` (no read gives the response back, as for a payment session).
 */
function recoveredFromRecord(
  exchange: ProxyExchange,
  found: Extract<RecordLookup, { kind: 'found' }>,
): StoredResponse | HttpError {
  const { route, context } = exchange;
  const field = found.lookup.field;
  const mismatches = lookupMismatches(found.lookup, exchange.content?.value ?? {}, found.record);
  logEvent(mismatches.length === 0 ? 'info' : 'warn', 'idempotency_recovered', {
    request_id: context.requestId,
    route: route.name,
    lookup_status: 200,
    ...(mismatches.length === 0 ? {} : { mismatched_fields: mismatches }),
  });
  if (mismatches.length > 0) {
    return new HttpError(
      409,
      'idempotency_record_mismatch',
      `${field} ${found.reference} already names a record whose ${mismatches.join(', ')} ` +
        'differ from this request; nothing was sent. Use a new reference and a new key',
    );
  }
  // The endpoint table says whether (and how) the POST's own response comes back from the record.
  const recover = found.lookup.recover;
  if (recover === null) {
    return new HttpError(
      409,
      'idempotency_answer_lost',
      `The request with this key was carried out (${field} ${found.reference}) but its answer ` +
        'was lost and cannot be rebuilt from the record; start over with a new reference and a new key',
    );
  }
  const headers = {
    'content-type': 'application/json',
    [IDEMPOTENT_RECOVERED_HEADER.toLowerCase()]: 'true',
  };
  const answer = recover(found.record as Readonly<Record<string, unknown>>);
  return { status: 200, headers, body: new TextEncoder().encode(JSON.stringify(answer)) };
}

/**
 * Whether a response is the service refusing a creation because its merchant reference
 * already exists (409 `duplicate_reference`, or "Refund already exists"), read from the
 * gateway's error body of the upstream answer. Reads a clone: the response stays usable.
 *
 * @param response - the proxied answer.
 */
export async function isDuplicateReference(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const body = await response
    .clone()
    .json()
    .catch(() => undefined);
  if (typeof body !== 'object' || body === null) return false;
  const { code, message } = body as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && DUPLICATE_CODES.has(code)) ||
    (typeof message === 'string' && DUPLICATE_MESSAGE.test(message.trim()))
  );
}

/**
 * Answers (and stores) the record found with `Idempotent-Recovered: true`, or refuses with
 * nothing stored and the claim stale, so the next retry verifies again.
 *
 * @param lock - the claim held.
 * @param found - the record the lookup found.
 * @returns the recovered response.
 * @throws {HttpError} 409 `idempotency_record_mismatch` / `idempotency_answer_lost`
 *   (see {@link recoveredFromRecord}).
 */
export async function responseFromRecord(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
  found: Extract<RecordLookup, { kind: 'found' }>,
): Promise<Response> {
  const answer = recoveredFromRecord(exchange, found);
  if (answer instanceof HttpError) {
    await keepStale(exchange, lock);
    throw answer;
  }
  return storeResponse(exchange, lock, answer, 'recovered');
}

/**
 * After a resend (verify before resend found nothing) was refused as a duplicate
 * reference: the first request did land. Looks the record up again and answers it as
 * {@link responseFromRecord} does; when it is still not readable (the service's reads lag
 * its writes), keeps the claim locked for another settle window. The refusal itself is
 * never stored as the key's response.
 *
 * @param lock - the claim held.
 * @returns the recovered response.
 * @throws {HttpError} 409 `idempotency_key_in_flight` with `Retry-After` (the window), or
 *   the errors of {@link responseFromRecord}.
 */
export async function reconcileDuplicate(
  exchange: ProxyExchange,
  lock: IdempotencyLock,
): Promise<Response> {
  const found = await lookUpRecord(exchange);
  logEvent('warn', 'idempotency_resend_refused', {
    request_id: exchange.context.requestId,
    route: exchange.route.name,
    record_found: found.kind === 'found',
  });
  if (found.kind === 'found') return responseFromRecord(exchange, lock, found);
  const windowMs = await holdForSettleWindow(exchange, lock, null);
  exchange.context.idempotency = 'in_flight';
  throw inFlight(
    'The payment service already has this reference but cannot show its record yet; retry with the same key',
    windowMs,
  );
}
