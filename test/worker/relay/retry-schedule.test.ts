/** The delivery retry schedule (worker/relay/retry-schedule.ts). */
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../lib/shared.ts';
import {
  MAX_DELIVERY_ATTEMPTS,
  MAX_QUEUE_DELAY_SEC,
  RETRY_DELAYS_SEC,
  retryDelay,
  scheduledRetryDelay,
} from '../../../worker/relay/retry-schedule.ts';

const middle = () => 0.5;
const lowest = () => 0;
const highest = () => 0.999_999;

describe('retry-schedule', () => {
  describe('RETRY_DELAYS_SEC', () => {
    it('should be 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with 8 attempts in all', () => {
      expect(RETRY_DELAYS_SEC).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
      expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
    });
  });

  describe('scheduledRetryDelay', () => {
    it.each([
      [1, 5],
      [2, 300],
      [3, 1800],
      [4, 7200],
      [5, 18_000],
      [6, 36_000],
      [7, 36_000],
    ])('should wait the scheduled delay after attempt %i without jitter', (attempts, delay) => {
      expect(scheduledRetryDelay(attempts, middle)).toBe(delay);
    });

    it('should stay within ±20% at the extremes of the jitter', () => {
      expect(scheduledRetryDelay(2, lowest)).toBe(240);
      expect(scheduledRetryDelay(2, highest)).toBe(360);
    });

    it('should vary with Math.random and stay within ±20%', () => {
      const delays = Array.from({ length: 200 }, () => scheduledRetryDelay(3));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(1440);
      expect(Math.max(...delays)).toBeLessThanOrEqual(2160);
      expect(new Set(delays).size).toBeGreaterThan(10);
    });

    it('should repeat the last delay past the schedule and treat 0 as the first attempt', () => {
      expect(scheduledRetryDelay(12, middle)).toBe(36_000);
      expect(scheduledRetryDelay(0, middle)).toBe(5);
    });
  });

  describe('parseRetryAfter', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');

    it('should read delay-seconds', () => {
      expect(parseRetryAfter('120', now)).toBe(120);
      expect(parseRetryAfter(' 0 ', now)).toBe(0);
    });

    it('should read an HTTP date as seconds from now, 0 when past', () => {
      expect(parseRetryAfter('Tue, 01 Jan 2030 00:10:00 GMT', now)).toBe(600);
      expect(parseRetryAfter('Mon, 31 Dec 2029 23:00:00 GMT', now)).toBe(0);
    });

    it.each([[null], [''], ['-5'], ['1.5'], ['soon'], ['2030-01-01']])(
      'should ignore %j',
      (value) => {
        expect(parseRetryAfter(value, now)).toBeUndefined();
      },
    );
  });

  describe('retryDelay', () => {
    it('should use the jittered schedule without Retry-After', () => {
      expect(retryDelay(1, undefined, middle)).toBe(5);
    });

    it('should wait at least what Retry-After asks', () => {
      expect(retryDelay(1, 120, middle)).toBe(120);
    });

    it('should keep the schedule when Retry-After asks for less', () => {
      expect(retryDelay(3, 10, middle)).toBe(1800);
    });

    it('should cap at the Queues maximum of 12 h', () => {
      expect(MAX_QUEUE_DELAY_SEC).toBe(43_200);
      expect(retryDelay(1, 1_000_000, middle)).toBe(43_200);
      expect(retryDelay(7, undefined, highest)).toBe(43_200);
    });
  });
});
