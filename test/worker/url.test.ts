import { describe, expect, it } from 'vitest';
import { fillPattern, joinUpstreamUrl } from '../../worker/upstream/url.ts';

describe('upstream URLs', () => {
  describe('fillPattern', () => {
    it('should put the segments in as received', () => {
      expect(
        fillPattern('/refunds/transactions/:payment_reference', { payment_reference: 'a%2Fb' }),
      ).toBe('/refunds/transactions/a%2Fb');
    });

    it('should leave a pattern without params unchanged', () => {
      expect(fillPattern('/banks', {})).toBe('/banks');
    });

    it.each([['.'], ['..'], ['%2e'], ['%2E%2e'], ['.%2E'], ['']])(
      'should refuse the segment %j',
      (segment) => {
        expect(fillPattern('/payments/verify/:reference', { reference: segment })).toBeUndefined();
      },
    );

    it('should refuse a missing segment', () => {
      expect(fillPattern('/payments/verify/:reference', {})).toBeUndefined();
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
