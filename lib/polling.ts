import { AbortError, TimeoutError } from './errors.ts';
import { delay } from './internal/delay.ts';

/**
 * Options of `waitForFinal` on transfers, refunds and debits, which polls the record
 * until its state is no longer `processing` or `pending`.
 */
export interface WaitOptions {
  /** Pause between two looks, in milliseconds. @default 2000 */
  intervalMs?: number;
  /** Give up after this long, in milliseconds. @default 120000 */
  timeoutMs?: number;
  /** Stops waiting (rejects with AbortError) when aborted. */
  signal?: AbortSignal;
}

/** States that are not final yet; any other state (known or new) ends the wait. */
const PENDING_STATUSES: ReadonlySet<string> = new Set(['processing', 'pending']);

/**
 * Looks a record up until its status is final (anything but processing or pending).
 *
 * @param look - fetches the current record (e.g. a verify call).
 * @param what - names the record in error messages, e.g. `transfer tr_1`.
 * @returns the first record whose status is final.
 * @throws {TimeoutError} when `timeoutMs` passes first; {@link AbortError} when `signal` aborts;
 *   any error of `look`.
 */
export async function pollUntilFinal<T extends { status: string }>(
  look: (options: { signal: AbortSignal } | undefined) => Promise<T>,
  what: string,
  options: WaitOptions = {},
): Promise<T> {
  const { intervalMs = 2_000, timeoutMs = 120_000, signal } = options;
  const deadline = Date.now() + timeoutMs;
  const stopped = () => new AbortError(`Stopped waiting for ${what}`, { cause: signal?.reason });
  for (;;) {
    if (signal?.aborted) throw stopped();
    const record = await look(signal && { signal });
    if (!PENDING_STATUSES.has(record.status)) return record;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new TimeoutError(`${what} still ${record.status} after ${timeoutMs} ms`, timeoutMs);
    }
    await delay(Math.min(intervalMs, remaining), signal, stopped);
  }
}
