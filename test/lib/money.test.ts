import { describe, expect, it } from 'vitest';
import {
  applyBasisPoints,
  formatMinorUnits,
  MAX_AMOUNT_MINOR,
  parseMinorUnits,
  toMajorUnits,
  toMinorUnits,
} from '../../lib/money.ts';
import { paymentFeeMinor, transferFeeMinor } from '../../lib/testing/fees.ts';

describe('money', () => {
  describe('parseMinorUnits', () => {
    it('should read decimal strings exactly', () => {
      expect(parseMinorUnits('5000.50')).toBe(500050);
      expect(parseMinorUnits('5000.5')).toBe(500050);
      expect(parseMinorUnits('5000')).toBe(500000);
      expect(parseMinorUnits('0.01')).toBe(1);
      expect(parseMinorUnits('0.10')).toBe(10);
    });

    it('should read numbers through their shortest decimal form', () => {
      expect(parseMinorUnits(0.1)).toBe(10);
      expect(parseMinorUnits(0.2)).toBe(20);
      expect(parseMinorUnits(1.15)).toBe(115);
      expect(parseMinorUnits(5000.5)).toBe(500050);
      expect(parseMinorUnits(19.99)).toBe(1999);
    });

    it('should reject 0.1 + 0.2, whose float has too many fraction digits', () => {
      expect(parseMinorUnits(0.1 + 0.2)).toBeUndefined();
    });

    it('should reject more than 2 fraction digits, signs, exponents and junk', () => {
      for (const value of [
        '1.001',
        '-1',
        '+1',
        '1e3',
        ' 1',
        '1 ',
        '.5',
        '5.',
        '',
        'abc',
        '1,000',
      ]) {
        expect(parseMinorUnits(value), value).toBeUndefined();
      }
      for (const value of [1e21, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e-7, 0.001]) {
        expect(parseMinorUnits(value), String(value)).toBeUndefined();
      }
      expect(parseMinorUnits(null)).toBeUndefined();
      expect(parseMinorUnits({})).toBeUndefined();
    });

    it('should cap amounts at MAX_AMOUNT_MINOR', () => {
      expect(parseMinorUnits('999999999999.99')).toBe(MAX_AMOUNT_MINOR);
      expect(parseMinorUnits('1000000000000.00')).toBeUndefined();
    });
  });

  describe('toMinorUnits', () => {
    it('should throw a RangeError on an inexact amount', () => {
      expect(() => toMinorUnits('1.234')).toThrow(RangeError);
    });
  });

  describe('sums', () => {
    it('should sum 0.10 + 0.20 to exactly 0.30 in minor units', () => {
      const sum = toMinorUnits('0.10') + toMinorUnits(0.2);
      expect(sum).toBe(toMinorUnits('0.30'));
      expect(toMajorUnits(sum)).toBe(0.3);
      expect(JSON.stringify(toMajorUnits(sum))).toBe('0.3');
    });

    it('should print minor units as the exact decimal in JSON', () => {
      expect(JSON.stringify(toMajorUnits(500050))).toBe('5000.5');
      expect(JSON.stringify(toMajorUnits(MAX_AMOUNT_MINOR))).toBe('999999999999.99');
      expect(JSON.stringify(toMajorUnits(1))).toBe('0.01');
    });
  });

  describe('formatMinorUnits', () => {
    it('should format with two digits', () => {
      expect(formatMinorUnits(500050)).toBe('5000.50');
      expect(formatMinorUnits(5)).toBe('0.05');
      expect(formatMinorUnits(-1999)).toBe('-19.99');
    });
  });

  describe('applyBasisPoints', () => {
    it('should round half up to the minor unit', () => {
      expect(applyBasisPoints(100, 150)).toBe(2); // 1.5 -> 2
      expect(applyBasisPoints(99, 150)).toBe(1); // 1.485 -> 1
      expect(applyBasisPoints(10_000_000, 150)).toBe(150_000);
    });
  });
});

describe('fees', () => {
  describe('paymentFeeMinor', () => {
    it('should be 1.5 % + 100.00', () => {
      expect(paymentFeeMinor(toMinorUnits('5000.00'))).toBe(toMinorUnits('175.00'));
    });

    it('should be capped at 2000.00', () => {
      expect(paymentFeeMinor(toMinorUnits('1000000.00'))).toBe(toMinorUnits('2000.00'));
    });

    it('should never exceed the payment', () => {
      expect(paymentFeeMinor(toMinorUnits('50.00'))).toBe(toMinorUnits('50.00'));
    });
  });

  describe('transferFeeMinor', () => {
    it('should charge 10, 25 or 50 by band', () => {
      expect(transferFeeMinor(toMinorUnits('5000.00'))).toBe(1000);
      expect(transferFeeMinor(toMinorUnits('5000.01'))).toBe(2500);
      expect(transferFeeMinor(toMinorUnits('50000.00'))).toBe(2500);
      expect(transferFeeMinor(toMinorUnits('50000.01'))).toBe(5000);
    });
  });
});
