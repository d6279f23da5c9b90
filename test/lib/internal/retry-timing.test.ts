import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  isRetryableStatus,
  MAX_RETRY_AFTER_MS,
  retryAfterMs,
} from '../../../lib/internal/retry-timing.ts';

describe('retry timing', () => {
  describe('backoffDelayMs', () => {
    it('should double from 0.5 s and cap at 8 s at the top of the jitter range', () => {
      const top = () => 0.999_999;
      expect([1, 2, 3, 4, 5, 6, 7].map((retry) => backoffDelayMs(retry, { random: top }))).toEqual([
        500, 1000, 2000, 4000, 8000, 8000, 8000,
      ]);
    });

    it('should never wait less than half the ceiling', () => {
      expect(backoffDelayMs(1, { random: () => 0 })).toBe(250);
      expect(backoffDelayMs(9, { random: () => 0 })).toBe(4000);
    });

    it('should honour custom bounds', () => {
      expect(
        backoffDelayMs(3, { initialDelayMs: 100, maxDelayMs: 300, random: () => 0.999_999 }),
      ).toBe(300);
    });
  });

  describe('retryAfterMs', () => {
    const now = Date.parse('2026-11-23T00:00:00Z');

    it('should read delta seconds', () => {
      expect(retryAfterMs(new Headers({ 'Retry-After': '3' }), now)).toBe(3000);
    });

    it('should read an HTTP date', () => {
      expect(
        retryAfterMs(new Headers({ 'Retry-After': 'Mon, 23 Nov 2026 00:00:05 GMT' }), now),
      ).toBe(5000);
    });

    it('should treat a past date as no wait', () => {
      expect(
        retryAfterMs(new Headers({ 'Retry-After': 'Sun, 22 Nov 2026 00:00:00 GMT' }), now),
      ).toBe(0);
    });

    it('should refuse waits above 60 s', () => {
      expect(
        retryAfterMs(new Headers({ 'Retry-After': String(MAX_RETRY_AFTER_MS / 1000 + 1) }), now),
      ).toBe(Number.POSITIVE_INFINITY);
      expect(retryAfterMs(new Headers({ 'Retry-After': '60' }), now)).toBe(60_000);
    });

    it('should ignore an absent or unreadable header', () => {
      expect(retryAfterMs(new Headers(), now)).toBeUndefined();
      expect(retryAfterMs(new Headers({ 'Retry-After': 'soon' }), now)).toBeUndefined();
    });
  });

  describe('isRetryableStatus', () => {
    it('should retry 408, 429 and 5xx only', () => {
      expect(
        [400, 401, 404, 408, 409, 422, 429, 500, 502, 503, 504].filter(isRetryableStatus),
      ).toEqual([408, 429, 500, 502, 503, 504]);
    });
  });
});
