/**
 * Retry timing policy of the SDK transport: exponential backoff with jitter, honouring
 * `Retry-After`. Kept apart from the client, as ky does.
 */
import { parseRetryAfter } from './retry-after.ts';

/** Options of {@link backoffDelayMs}. */
interface BackoffOptions {
  /** Delay before the first retry, in milliseconds. @default 500 */
  initialDelayMs?: number;
  /** Largest delay between attempts, in milliseconds. @default 8000 */
  maxDelayMs?: number;
  /** Random source in [0, 1). @default Math.random */
  random?: () => number;
}

/**
 * Longest `Retry-After` the SDK honours, in milliseconds; a longer one is not waited for.
 * @internal Exported for the test that answers with a wait over the limit.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Delay before retry number `retry` (1 for the first retry): exponential from
 * `initialDelayMs`, doubling, capped at `maxDelayMs`, with "equal jitter" (a random
 * point in the upper half), so retries of many clients spread out but never collapse to 0.
 *
 * @param retry - 1-based retry number.
 * @returns milliseconds to wait.
 */
export function backoffDelayMs(retry: number, options: BackoffOptions = {}): number {
  const { initialDelayMs = 500, maxDelayMs = 8_000, random = Math.random } = options;
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * The wait a response asks for in `Retry-After` (delay-seconds or an HTTP-date, read by
 * {@link parseRetryAfter}).
 *
 * @param headers - the response headers; `undefined` when no response arrived.
 * @param nowMs - current time in milliseconds since the epoch, for HTTP dates.
 * @returns milliseconds to wait (0 for a date in the past); `undefined` when absent or
 *   unreadable; `Infinity` when above {@link MAX_RETRY_AFTER_MS}, meaning "do not retry".
 */
export function retryAfterMs(headers: Headers | undefined, nowMs: number): number | undefined {
  const seconds = parseRetryAfter(headers?.get('retry-after'), nowMs);
  if (seconds === undefined) return undefined;
  return seconds > MAX_RETRY_AFTER_MS / 1000 ? Number.POSITIVE_INFINITY : seconds * 1000;
}

/** Whether a response status is worth retrying: 408, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
