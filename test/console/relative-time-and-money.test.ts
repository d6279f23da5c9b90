import { describe, expect, it } from 'vitest';
import { formatAmount } from '../../console/src/money.ts';
import { dueIn } from '../../console/src/relative-time.ts';

const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const at = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();

describe('console relative time', () => {
  describe('dueIn', () => {
    it.each([
      [0.5, 'in 1 s'],
      [45, 'in 45 s'],
      [59, 'in 59 s'],
      [60, 'in 1 min'],
      [4 * 60 - 10, 'in 4 min'],
      [4 * 60 + 29, 'in 4 min'],
      [59 * 60 + 40, 'in 1 h'],
      [2 * 3600 + 5 * 60, 'in 2 h 5 min'],
      [23 * 3600 + 59 * 60 + 50, 'in 1 d'],
      [27 * 3600, 'in 1 d 3 h'],
      [3 * 86400, 'in 3 d'],
    ])('should write %s s ahead as %j', (seconds, phrase) => {
      expect(dueIn(at(seconds), NOW)).toBe(phrase);
    });

    it('should say now when the time is due or past', () => {
      expect(dueIn(at(0), NOW)).toBe('now');
      expect(dueIn(at(-300), NOW)).toBe('now');
    });

    it('should give back a text that is not a time', () => {
      expect(dueIn('soon', NOW)).toBe('soon');
    });
  });
});

describe('console money', () => {
  describe('formatAmount', () => {
    it.each([
      [25000.5, 'NGN', '25,000.50 NGN'],
      [1200.13, null, '1,200.13'],
      [0.1, 'GHS', '0.10 GHS'],
      [999999999999.99, 'NGN', '999,999,999,999.99 NGN'],
      [5, 'NGN', '5.00 NGN'],
      [-1234.5, 'NGN', '-1,234.50 NGN'],
    ])('should write %s %s as %j', (amount, currency, text) => {
      expect(formatAmount(amount, currency)).toBe(text);
    });
  });
});
