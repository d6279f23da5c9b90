import { describe, expect, it } from 'vitest';
import { readCapped } from '../../lib/shared.ts';

// A body of `count` chunks of `size` bytes, counting how many the reader pulled.
function streamed(count: number, size: number) {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === count) return controller.close();
      pulled++;
      controller.enqueue(new Uint8Array(size).fill(pulled));
    },
    cancel() {
      cancelled = true;
    },
  });
  const request = new Request('http://gateway.test/x', {
    method: 'POST',
    body,
    duplex: 'half',
  } as RequestInit);
  return { request, pulled: () => pulled, cancelled: () => cancelled };
}

describe('readCapped', () => {
  it('should read a body within the limit whole', async () => {
    const { request } = streamed(3, 100);
    const body = await readCapped(request, 1_000);
    expect(body.byteLength).toBe(300);
    expect([body[0], body[100], body[299]]).toEqual([1, 2, 3]);
  });

  it('should stop one chunk past the limit and cancel the rest of an oversized body', async () => {
    const big = streamed(1_000, 1_024);
    const body = await readCapped(big.request, 2_048);
    expect(body.byteLength).toBe(3_072);
    expect(big.pulled()).toBeLessThan(10);
    expect(big.cancelled()).toBe(true);
  });

  it('should read an absent body as empty', async () => {
    expect(
      (await readCapped(new Request('http://gateway.test/x', { method: 'POST' }), 10)).byteLength,
    ).toBe(0);
  });
});
