import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../worker/http/errors.ts';
import { fillPattern, joinUpstreamUrl, matchesPattern } from '../../../worker/upstream/url.ts';

describe('upstream URLs', () => {
  describe('fillPattern', () => {
    it('should percent-encode each decoded value as one segment', () => {
      expect(
        fillPattern('/refunds/transactions/:payment_reference', { payment_reference: 'a?b#c%d' }),
      ).toBe('/refunds/transactions/a%3Fb%23c%25d');
    });

    it('should leave a pattern without params unchanged', () => {
      expect(fillPattern('/banks', {})).toBe('/banks');
    });

    it.each([
      ['.', 'Expected a reference other than'],
      ['..', 'Expected a reference other than'],
      ['', 'Expected 1 to 100 printable characters'],
      ['a b', 'Expected 1 to 100 printable characters'],
      ['a\nb', 'Expected 1 to 100 printable characters'],
      ['x'.repeat(101), 'Expected 1 to 100 printable characters'],
      ['../../merchants/transactions', 'Expected no "/"'],
      ['a/b', 'Expected no "/"'],
    ])('should refuse the decoded value %j (400 naming the parameter)', (value, message) => {
      let thrown: unknown;
      try {
        fillPattern('/payments/verify/:reference', { reference: value });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HttpError);
      expect(thrown).toMatchObject({
        status: 400,
        code: 'validation_failed',
        issues: expect.arrayContaining([
          { path: 'reference', message: expect.stringContaining(message) },
        ]),
      });
    });

    it('should refuse a missing parameter', () => {
      expect(() => fillPattern('/payments/verify/:reference', {})).toThrow(HttpError);
    });
  });

  describe('matchesPattern', () => {
    it.each([
      ['/refunds/:refund_reference', '/refunds/count-by-status', true],
      ['/refunds/count-by-status', '/refunds/count-by-status', true],
      ['/refunds/:refund_reference', '/refunds/', false],
      ['/refunds/:refund_reference', '/refunds/a/b', false],
      ['/banks', '/banks/resolve', false],
    ])('should match %s against %s: %s', (pattern, path, expected) => {
      expect(matchesPattern(pattern, path)).toBe(expected);
    });
  });

  describe('joinUpstreamUrl', () => {
    it.each([
      ['http://127.0.0.1:8788', 'http://127.0.0.1:8788/banks?x=1'],
      ['http://127.0.0.1:8788/', 'http://127.0.0.1:8788/banks?x=1'],
      ['https://api.test/v1', 'https://api.test/v1/banks?x=1'],
      ['https://api.test/v1//', 'https://api.test/v1/banks?x=1'],
    ])('should join %s without double slashes', (base, expected) => {
      expect(joinUpstreamUrl(new URL(base), '/banks', '?x=1').href).toBe(expected);
    });

    it('should keep percent-encoding in the path and the query', () => {
      const url = joinUpstreamUrl(new URL('https://api.test'), '/payments/verify/a%20b', '?q=%2B1');
      expect(url.href).toBe('https://api.test/payments/verify/a%20b?q=%2B1');
    });
  });
});
