/**
 * Settles as `promise` does, but rejects as soon as `signal` aborts (at once when it
 * already has), even when `promise` never settles: not every `fetch`, body stream or
 * timer is tied to a signal, and a stalled one must not outlive its timeout. The abort
 * listener is removed once either side settles.
 *
 * @param promise - the work to wait for (a fetch, a body read, a timer).
 * @param signal - stops the wait; `undefined` waits for `promise` alone.
 * @param aborted - builds the rejection. @default the signal's `reason`
 * @returns what `promise` resolves to.
 * @throws what `promise` rejects with, or `aborted()` when the signal aborts first.
 *
 * @example
 * ```ts
 * const text = await untilAborted(response.text(), controller.signal);
 * ```
 */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  aborted: () => unknown = () => signal?.reason,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal?.removeEventListener('abort', onAbort));
  });
}
