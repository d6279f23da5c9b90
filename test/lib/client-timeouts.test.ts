/**
 * The per-attempt timeout and the call deadline hold even when the injected `fetch`
 * ignores its AbortSignal and never settles, and no timer outlives the call. Time is
 * vitest's fake clock; gateway mode (a bearer token) keeps signing off the clock's way.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PaymentsClient, TimeoutError } from '../../lib/index.ts';

/** A `fetch` that ignores its signal and never settles, counting its calls. */
function stalledFetch() {
  const calls: string[] = [];
  const fetch = ((input: RequestInfo | URL) => {
    calls.push(String(input));
    return new Promise<never>(() => {});
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

function client(options: ConstructorParameters<typeof PaymentsClient>[0]) {
  return new PaymentsClient({
    bearerToken: 'token',
    baseUrl: 'http://127.0.0.1:9',
    random: () => 0,
    ...options,
  });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PaymentsClient timeouts', () => {
  describe('timeoutMs', () => {
    it('should reject with TimeoutError when fetch ignores the signal and never settles', async () => {
      const stalled = stalledFetch();
      const outcome = client({ fetch: stalled.fetch, timeoutMs: 50, maxRetries: 0 })
        .transfers.verify('tr_1')
        .catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(49);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).timeoutMs).toBe(50);
      expect(stalled.calls).toEqual(['http://127.0.0.1:9/disbursements/verify/tr_1']);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('should free the body of an answer that arrives after the timeout', async () => {
      let cancelled = false;
      const late = () =>
        new Response(
          new ReadableStream({
            cancel: () => {
              cancelled = true;
            },
          }),
        );
      // Ignores the signal and answers at 100 ms, after the 50 ms timeout.
      const slow = (() =>
        new Promise<Response>((resolve) => setTimeout(() => resolve(late()), 100))) as typeof fetch;
      const outcome = client({ fetch: slow, timeoutMs: 50, maxRetries: 0 })
        .banks.list()
        .catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(50);
      expect(await outcome).toBeInstanceOf(TimeoutError);
      expect(cancelled).toBe(false);
      await vi.advanceTimersByTimeAsync(50);
      expect(cancelled).toBe(true);
    });

    it('should retry a stalled attempt as it retries any timeout', async () => {
      const stalled = stalledFetch();
      const outcome = client({ fetch: stalled.fetch, timeoutMs: 50, maxRetries: 1 })
        .banks.list()
        .catch((error: unknown) => error);
      // 50 ms, the first retry's backoff (250 ms with random 0), 50 ms.
      await vi.advanceTimersByTimeAsync(350);
      expect(await outcome).toBeInstanceOf(TimeoutError);
      expect(stalled.calls).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  describe('deadlineMs', () => {
    it('should end the call at the deadline though fetch ignores the signal', async () => {
      const stalled = stalledFetch();
      const outcome = client({
        fetch: stalled.fetch,
        timeoutMs: 100,
        deadlineMs: 1_000,
        maxRetries: 5,
      })
        .transfers.verify('tr_1')
        .catch((error: unknown) => error);
      // Attempts end at 100 and 450 ms; the third starts at 950 ms with 50 ms of budget left.
      await vi.advanceTimersByTimeAsync(999);
      expect(stalled.calls).toHaveLength(3);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).timeoutMs).toBe(50);
      expect(stalled.calls).toHaveLength(3);
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
