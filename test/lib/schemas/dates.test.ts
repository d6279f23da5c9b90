import { describe, expect, it } from 'vitest';
import { addDays, isCalendarDate, parseInstant } from '../../../lib/schemas/dates.ts';
import { createdWithin } from '../../../lib/testing/lists.ts';

describe('dates', () => {
  describe('isCalendarDate', () => {
    it('should accept real dates only', () => {
      expect(isCalendarDate('2024-02-29')).toBe(true);
      expect(isCalendarDate('2025-02-29')).toBe(false);
      expect(isCalendarDate('2025-13-01')).toBe(false);
      expect(isCalendarDate('2025-1-01')).toBe(false);
    });
  });

  describe('addDays', () => {
    it('should add days across months in UTC', () => {
      expect(addDays('2025-01-31', 30)).toBe('2025-03-02');
      expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    });
  });

  describe('parseInstant', () => {
    it('should read a date as a whole UTC day', () => {
      expect(parseInstant('2025-01-15', 'start')).toBe(Date.UTC(2025, 0, 15));
      expect(parseInstant('2025-01-15', 'end')).toBe(Date.UTC(2025, 0, 16) - 1);
    });

    it('should read a zoneless date-time as UTC and cover its precision when ending', () => {
      expect(parseInstant('2025-01-15T10:30', 'end')).toBe(Date.UTC(2025, 0, 15, 10, 30, 59, 999));
      expect(parseInstant('2025-01-15T10:30:05', 'end')).toBe(
        Date.UTC(2025, 0, 15, 10, 30, 5, 999),
      );
      expect(parseInstant('2025-01-15T10:30:05.250Z', 'end')).toBe(
        Date.UTC(2025, 0, 15, 10, 30, 5, 250),
      );
    });

    it('should honour offsets', () => {
      expect(parseInstant('2025-01-15T10:00:00+01:00', 'start')).toBe(Date.UTC(2025, 0, 15, 9));
      expect(parseInstant('2025-01-15T10:00:00+0100', 'start')).toBe(Date.UTC(2025, 0, 15, 9));
    });

    it('should reject junk', () => {
      expect(parseInstant('yesterday', 'start')).toBeUndefined();
      expect(parseInstant('2025-01-15T25:00', 'start')).toBeUndefined();
    });
  });

  describe('createdWithin', () => {
    it('should include both bounds whole', () => {
      const within = createdWithin('2025-01-15', '2025-01-16');
      expect(within(Date.UTC(2025, 0, 15))).toBe(true);
      expect(within(Date.UTC(2025, 0, 16, 23, 59, 59, 999))).toBe(true);
      expect(within(Date.UTC(2025, 0, 17))).toBe(false);
      expect(within(Date.UTC(2025, 0, 14, 23, 59, 59, 999))).toBe(false);
    });
  });
});
