/**
 * Contract tests of the sandbox emulator's error handling over real HTTP (the error
 * body and stable codes of docs/gateway.md): unknown routes, wrong methods, media types,
 * malformed JSON, and the request id.
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectSuccess, expectValidation } from '../../support/expect-api.ts';
import { paymentBody } from '../../support/payloads.ts';
import { uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient } from '../../support/sandbox-fixture.ts';

const api = useSandboxClient();

function allowed(header: string | null): string[] {
  return (header ?? '')
    .split(',')
    .map((method) => method.trim().toUpperCase())
    .filter((method) => method !== '');
}

describe('sandbox errors', () => {
  describe('unknown routes', () => {
    it('should answer 404 not_found with the error body to a signed unknown path', async () => {
      const res = await api.call('GET', '/nowhere');
      expectError(res, 404, 'not_found');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('should answer 404 not_found to an unknown path below a known prefix', async () => {
      expectError(await api.call('GET', '/payments/verify'), 404, 'not_found');
    });

    it('should answer 404 not_found to an unknown control', async () => {
      const res = await api.control('nowhere', {});
      expectError(res, 404, 'not_found');
    });
  });

  describe('wrong methods', () => {
    it.each([
      ['GET', '/payments/initialize', 'POST'],
      ['DELETE', '/payments/verify/x', 'GET'],
      ['POST', '/merchants/transactions', 'GET'],
      ['PUT', '/disbursements/initialize', 'POST'],
      ['POST', '/refunds/count-by-status', 'GET'],
      ['POST', '/direct-debits/mandates/x/cancel', 'PATCH'],
      ['GET', '/direct-debits/debit', 'POST'],
      ['POST', '/banks', 'GET'],
    ])(
      'should answer 405 method_not_allowed to %s %s with Allow: %s',
      async (method, path, allow) => {
        const res = await api.call(
          method,
          path,
          method === 'GET' || method === 'DELETE' ? undefined : {},
        );
        expectError(res, 405, 'method_not_allowed');
        expect(allowed(res.headers.get('allow'))).toContain(allow);
        expect(allowed(res.headers.get('allow'))).not.toContain(method);
      },
    );

    it('should list both methods of a path that has two', async () => {
      // GET /virtual-accounts/{ref} retrieves; POST /virtual-accounts/email looks up by email.
      const res = await api.call('DELETE', '/virtual-accounts/email');
      expectError(res, 405, 'method_not_allowed');
      expect(allowed(res.headers.get('allow'))).toEqual(expect.arrayContaining(['GET', 'POST']));
    });
  });

  describe('request bodies', () => {
    it('should answer 415 unsupported_media_type to a text/plain POST', async () => {
      const res = await api.call('POST', '/payments/initialize', paymentBody(), {
        contentType: 'text/plain',
      });
      expectError(res, 415, 'unsupported_media_type');
    });

    it('should answer 415 unsupported_media_type to a form-encoded POST', async () => {
      const res = await api.call('POST', '/disbursements/initialize', undefined, {
        rawBody: 'amount=5',
        contentType: 'application/x-www-form-urlencoded',
      });
      expectError(res, 415, 'unsupported_media_type');
    });

    it('should not create anything from a body it refused as the wrong media type', async () => {
      const reference = uniqueRef('pay');
      await api.call('POST', '/payments/initialize', paymentBody({ reference }), {
        contentType: 'text/plain',
      });
      expectError(await api.call('GET', `/payments/verify/${reference}`), 404, 'not_found');
    });

    it('should accept application/json with a charset parameter', async () => {
      const res = await api.call('POST', '/payments/initialize', paymentBody(), {
        contentType: 'application/json; charset=utf-8',
      });
      expectSuccess(res);
    });

    it('should answer 400 validation_failed to malformed JSON', async () => {
      const res = await api.call('POST', '/payments/initialize', undefined, {
        rawBody: '{"email": "a@example.com",',
      });
      expectError(res, 400, 'validation_failed');
    });

    it('should answer 400 validation_failed to an empty JSON body', async () => {
      const res = await api.call('POST', '/payments/initialize', undefined, { rawBody: '' });
      expectError(res, 400, 'validation_failed');
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"hello"'],
      ['null', 'null'],
    ])('should answer 400 validation_failed to %s as body', async (_label, raw) => {
      const res = await api.call('POST', '/payments/initialize', undefined, { rawBody: raw });
      expectError(res, 400, 'validation_failed');
    });

    it('should list only the fields that are wrong', async () => {
      const res = await api.call('POST', '/disbursements/initialize', {
        customer_name: 'Ada',
        customer_email: 'ada@example.com',
        reference: uniqueRef('tr'),
        amount: 'x',
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
      });
      expectValidation(res, ['amount']);
      expect(res.body.issues).toHaveLength(1);
    });
  });

  describe('request id', () => {
    it('should echo X-Request-Id in the error body and the response header', async () => {
      const id = uniqueRef('req');
      const res = await api.call('GET', '/nowhere', undefined, { headers: { 'X-Request-Id': id } });
      expect(res.body.request_id).toBe(id);
      expect(res.headers.get('x-request-id')).toBe(id);
    });

    it('should echo X-Request-Id on a 401', async () => {
      const id = uniqueRef('req');
      const res = await api.call('GET', '/merchants/transactions', undefined, {
        sign: false,
        headers: { 'X-Request-Id': id },
      });
      expectError(res, 401, 'unauthorized');
      expect(res.body.request_id).toBe(id);
    });

    it('should echo X-Request-Id on a validation error', async () => {
      const id = uniqueRef('req');
      const res = await api.call(
        'POST',
        '/payments/initialize',
        {},
        {
          headers: { 'X-Request-Id': id },
        },
      );
      expectError(res, 400, 'validation_failed');
      expect(res.body.request_id).toBe(id);
      expect(res.headers.get('x-request-id')).toBe(id);
    });

    it('should echo X-Request-Id on a success', async () => {
      const id = uniqueRef('req');
      const res = await api.call('GET', '/merchants/transactions', undefined, {
        headers: { 'X-Request-Id': id },
      });
      expectSuccess(res);
      expect(res.headers.get('x-request-id')).toBe(id);
    });

    it('should generate a request id when none is sent and use it in body and header', async () => {
      const res = await api.call('GET', '/nowhere');
      expect(typeof res.body.request_id).toBe('string');
      expect(res.body.request_id.length).toBeGreaterThan(0);
      expect(res.headers.get('x-request-id')).toBe(res.body.request_id);
    });

    it('should generate a different request id for each request', async () => {
      const a = await api.call('GET', '/nowhere');
      const b = await api.call('GET', '/nowhere');
      expect(a.body.request_id).not.toBe(b.body.request_id);
    });
  });
});
