import { describe, expect, it } from 'vitest';
import { AbortError, TimeoutError } from '../../lib/errors.ts';
import { pollUntilFinal } from '../../lib/polling.ts';

function sequence(...statuses: string[]) {
  let calls = 0;
  const look = async () => ({
    status: statuses[Math.min(calls++, statuses.length - 1)] ?? 'processing',
  });
  return { look, calls: () => calls };
}

describe('pollUntilFinal', () => {
  it('should return the first final record', async () => {
    const { look, calls } = sequence('processing', 'processing', 'success');
    await expect(pollUntilFinal(look, 'transfer t', { intervalMs: 1 })).resolves.toEqual({
      status: 'success',
    });
    expect(calls()).toBe(3);
  });

  it('should time out with the last status in the message', async () => {
    const { look } = sequence('processing');
    const error = await pollUntilFinal(look, 'transfer t', {
      intervalMs: 5,
      timeoutMs: 30,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).message).toBe('transfer t still processing after 30 ms');
  });

  it('should stop when the signal aborts', async () => {
    const { look } = sequence('processing');
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 20);
    const error = await pollUntilFinal(look, 'refund r', {
      intervalMs: 1_000,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(((error as AbortError).cause as Error).message).toBe('user left');
  });
});
