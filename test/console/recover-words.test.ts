import { describe, expect, it } from 'vitest';
import { matchedWords } from '../../console/src/components/recover-form.ts';

describe('console bulk recovery', () => {
  describe('matchedWords', () => {
    it('should write a capped count as a lower bound', () => {
      expect(matchedWords({ matched: 10_000, skipped_disabled: 12, capped: true })).toBe(
        '10,000+ deliveries match',
      );
    });

    it('should write an exact count with its grouping and number', () => {
      expect(matchedWords({ matched: 1234, skipped_disabled: 0, capped: false })).toBe(
        '1,234 deliveries match',
      );
      expect(matchedWords({ matched: 1, skipped_disabled: 0, capped: false })).toBe(
        '1 delivery matches',
      );
      expect(matchedWords({ matched: 0, skipped_disabled: 0, capped: false })).toBe(
        '0 deliveries match',
      );
    });
  });
});
