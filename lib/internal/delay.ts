/**
 * Waits `ms` milliseconds, or rejects with `aborted()` as soon as `signal` aborts (at
 * once when it already has). The timer and the listener are removed either way.
 *
 * @param ms - the wait in milliseconds.
 * @param aborted - builds the rejection (an AbortError naming what was stopped).
 */
export function delay(
  ms: number,
  signal: AbortSignal | undefined,
  aborted: () => Error,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
