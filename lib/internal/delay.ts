import { untilAborted } from './until-aborted.ts';

/**
 * Waits `ms` milliseconds, or rejects with `aborted()` as soon as `signal` aborts (at
 * once when it already has). The timer and the listener are removed either way.
 *
 * @param ms - the wait in milliseconds.
 * @param signal - stops the wait.
 * @param aborted - builds the rejection (an AbortError naming what was stopped).
 * @returns once the time has passed.
 * @throws what `aborted()` returns, when the signal aborts first.
 */
export function delay(
  ms: number,
  signal: AbortSignal | undefined,
  aborted: () => Error,
): Promise<void> {
  let stopTimer = (): void => {};
  const elapsed = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    stopTimer = () => clearTimeout(timer);
  });
  return untilAborted(elapsed, signal, aborted).finally(() => stopTimer());
}
