/**
 * One HTTP attempt of a delivery: POST with a timeout, redirects not followed (a 3xx is
 * a failure), and what the attempt record keeps: status, latency, error and the first
 * 2 KB of the response body. The send step of a delivery attempt, between prepare and settle.
 */
import { utf8Prefix } from '../db/compact-body.ts';
import { RESPONSE_EXCERPT_MAX_BYTES } from '../db/delivery-attempts.ts';
import type { ReadyDelivery } from './prepare-delivery.ts';

/** Timeout of one delivery attempt, in milliseconds (headers and excerpt read). */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** Bytes of the response body read for the attempt record (2 KB), then cancelled. */
const RESPONSE_EXCERPT_BYTES = RESPONSE_EXCERPT_MAX_BYTES;

/** What one attempt got. */
interface SendResult {
  /** When the request started, epoch milliseconds. */
  readonly startedAt: number;
  /** The HTTP status; `null` when no response came (network error, timeout). */
  readonly status: number | null;
  /** Milliseconds until the excerpt was read (or the failure). */
  readonly latencyMs: number;
  /** Why the attempt failed without a response, or `null`. */
  readonly error: string | null;
  /**
   * The first {@link RESPONSE_EXCERPT_BYTES} bytes of the body as UTF-8 text, cut to at most as
   * many bytes once encoded again, or `null`.
   */
  readonly responseExcerpt: string | null;
  /** The response's `Retry-After` header, or `null`. */
  readonly retryAfter: string | null;
}

/** Options of {@link sendDelivery}. */
interface SendOptions {
  /** The attempt's timeout, in milliseconds. @default 15000 */
  readonly timeoutMs?: number;
  /** The fetch the request goes through. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** A request sent (or tried), ready to be settled. */
export interface SentDelivery {
  readonly kind: 'sent';
  readonly eventId: string;
  readonly subscriptionId: string;
  /** What the attempt got. */
  readonly sendResult: SendResult;
  /** When the attempt ended, epoch milliseconds: the base of the retry delay. */
  readonly settledAt: number;
}

/**
 * Sends a prepared delivery; never throws (see {@link sendDelivery}).
 *
 * @param ready - the signed request from the prepare step.
 * @param send - the fetch the request goes through.
 * @returns what the attempt got and when it ended.
 */
export async function sendPreparedDelivery(
  ready: ReadyDelivery,
  send: typeof fetch,
): Promise<SentDelivery> {
  const sendResult = await sendDelivery(ready.url, ready.headers, ready.body, { fetch: send });
  return {
    kind: 'sent',
    eventId: ready.eventId,
    subscriptionId: ready.subscriptionId,
    sendResult,
    settledAt: Date.now(),
  };
}

/**
 * POSTs a delivery and never throws: every failure becomes a {@link SendResult}.
 *
 * @param url - the subscription URL.
 * @param headers - the signed headers.
 * @param body - the original event body.
 * @param options - the timeout and the fetch to use.
 * @returns status, latency, error, excerpt and `Retry-After`.
 */
async function sendDelivery(
  url: string,
  headers: Headers,
  body: string,
  options: SendOptions = {},
): Promise<SendResult> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const send = options.fetch ?? fetch;
  const startedAt = Date.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const done = (rest: Omit<SendResult, 'startedAt' | 'latencyMs'>): SendResult => ({
    startedAt,
    latencyMs: Date.now() - startedAt,
    ...rest,
  });
  let response: Response;
  try {
    response = await send(url, { method: 'POST', headers, body, redirect: 'manual', signal });
  } catch (error) {
    return done({
      status: null,
      error: describe(error, timeoutMs),
      responseExcerpt: null,
      retryAfter: null,
    });
  }
  const retryAfter = response.headers.get('Retry-After');
  try {
    const responseExcerpt = await readExcerpt(response);
    return done({ status: response.status, error: null, responseExcerpt, retryAfter });
  } catch (error) {
    // The status counts; a body cut short is noted, not a different outcome.
    return done({
      status: response.status,
      error: describe(error, timeoutMs),
      responseExcerpt: null,
      retryAfter,
    });
  }
}

/**
 * Reads at most {@link RESPONSE_EXCERPT_BYTES} bytes, then cancels the rest of the body; the
 * text is cut again to that many bytes of UTF-8, since each byte that is not UTF-8 decodes to
 * U+FFFD, 3 bytes once stored.
 */
async function readExcerpt(response: Response): Promise<string | null> {
  if (response.body === null) return null;
  const reader = response.body.getReader();
  const excerpt = new Uint8Array(RESPONSE_EXCERPT_BYTES);
  let length = 0;
  while (length < RESPONSE_EXCERPT_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = Math.min(value.byteLength, RESPONSE_EXCERPT_BYTES - length);
    excerpt.set(value.subarray(0, take), length);
    length += take;
  }
  await reader.cancel().catch(() => undefined);
  // Not fatal: a multi-byte character cut at 2 KB becomes U+FFFD.
  const text = new TextDecoder().decode(excerpt.subarray(0, length));
  return utf8Prefix(text, RESPONSE_EXCERPT_BYTES);
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `timed out after ${timeoutMs} ms`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
