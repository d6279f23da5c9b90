/**
 * lib/internal/until-aborted.ts, the one "reject as soon as the signal aborts" helper of
 * the SDK's transport and retry delays and of the gateway's upstream calls, and
 * lib/internal/delay.ts built on it.
 */
import { describe, expect, it } from 'vitest';
import { delay } from '../../../lib/internal/delay.ts';
import { untilAborted } from '../../../lib/internal/until-aborted.ts';

const never = new Promise<never>(() => {});

/** An AbortSignal that counts its `abort` listeners. */
function countedSignal() {
  const controller = new AbortController();
  let listeners = 0;
  const { signal } = controller;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners++;
    add(...args);
  }) as typeof add;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listeners--;
    remove(...args);
  }) as typeof remove;
  return { controller, signal, listeners: () => listeners };
}

describe('untilAborted', () => {
  it('should settle as the promise does when the signal stays quiet', async () => {
    const { signal, listeners } = countedSignal();
    await expect(untilAborted(Promise.resolve('done'), signal)).resolves.toBe('done');
    await expect(untilAborted(Promise.reject(new Error('failed')), signal)).rejects.toThrow(
      'failed',
    );
    expect(listeners()).toBe(0);
  });

  it('should reject with the reason as soon as the signal aborts, though the promise never settles', async () => {
    const controller = new AbortController();
    const waiting = untilAborted(never, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });

  it('should reject at once when the signal has already aborted', async () => {
    await expect(untilAborted(never, AbortSignal.abort(new Error('before')))).rejects.toThrow(
      'before',
    );
  });

  it('should reject with what `aborted` builds', async () => {
    const controller = new AbortController();
    const waiting = untilAborted(never, controller.signal, () => new RangeError('built'));
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(RangeError);
  });

  it('should wait for the promise alone without a signal', async () => {
    await expect(untilAborted(Promise.resolve(1), undefined)).resolves.toBe(1);
  });
});

describe('delay', () => {
  it('should wait the given milliseconds', async () => {
    const started = Date.now();
    await delay(50, undefined, () => new Error('aborted'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('should remove its abort listener once the time has passed', async () => {
    const { signal, listeners } = countedSignal();
    await delay(5, signal, () => new Error('aborted'));
    expect(listeners()).toBe(0);
  });

  it('should reject as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = delay(60_000, controller.signal, () => new Error('stopped waiting'));
    setTimeout(() => controller.abort(), 10);
    await expect(waiting).rejects.toThrow('stopped waiting');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
