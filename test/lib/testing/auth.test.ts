/**
 * Contract tests of the sandbox emulator's request authentication over real HTTP
 * (docs/payments-api.md, "Authentication"; docs/sandbox.md, "Authentication and the two clocks"): which
 * endpoints need the signature headers, which failures answer `unauthorized` or
 * `invalid_signature`, the 300 s freshness window on the real clock, and repeated
 * signatures.
 */
import { describe, expect, it } from 'vitest';
import { type SignatureHeaders, signRequest } from '../../../lib/signing.ts';
import { expectError, expectSuccess } from '../../support/expect-api.ts';
import { paymentBody } from '../../support/payloads.ts';
import {
  type CallOptions,
  SANDBOX_KEY_ID,
  SANDBOX_SECRET,
  uniqueRef,
} from '../../support/sandbox-client.ts';
import { useSandboxClient } from '../../support/sandbox-fixture.ts';

const api = useSandboxClient();

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** `GET /merchants/transactions`, a signed endpoint without a body, sent with `options`. */
function listTransactions(options?: CallOptions) {
  return api.call('GET', '/merchants/transactions', undefined, options);
}

/** Signature headers of the sandbox merchant over `body`, signed now. */
function merchantSignature(body = ''): Promise<SignatureHeaders> {
  return signRequest({ keyId: SANDBOX_KEY_ID, secret: SANDBOX_SECRET, body });
}

/** Every endpoint of the spec that requires the signature headers (docs/payments-api.md, "Authentication"). */
const SIGNED_ENDPOINTS: Array<[method: string, path: string, body?: unknown]> = [
  ['POST', '/payments/initialize', {}],
  ['GET', '/payments/verify/any'],
  ['GET', '/merchants/transactions'],
  ['POST', '/disbursements/initialize', {}],
  ['GET', '/disbursements/verify/any'],
  ['GET', '/merchants/disbursements'],
  ['POST', '/refunds/initialize', {}],
  ['GET', '/refunds/any'],
  ['GET', '/refunds/transactions/any'],
  ['GET', '/merchants/refunds'],
  ['GET', '/refunds/count-by-status'],
  ['POST', '/banks/resolve', {}],
  ['POST', '/direct-debits/mandates', {}],
  ['POST', '/direct-debits/mandates/any/initiate-activation'],
  ['POST', '/direct-debits/mandates/any/validate-activation', {}],
  ['GET', '/direct-debits/mandates/any'],
  ['PATCH', '/direct-debits/mandates/any/cancel'],
  ['POST', '/direct-debits/debit', {}],
  ['POST', '/direct-debits/disburse', {}],
  ['GET', '/direct-debits/status/any'],
  ['POST', '/virtual-accounts', {}],
  ['GET', '/virtual-accounts/any'],
  ['POST', '/virtual-accounts/email', {}],
  ['GET', '/merchants/virtual-accounts/transactions'],
];

describe('sandbox authentication', () => {
  describe('signed endpoints', () => {
    it.each(SIGNED_ENDPOINTS)(
      'should answer 401 unauthorized to an unsigned %s %s',
      async (method, path, body) => {
        const res = await api.call(method, path, body, { sign: false });
        expectError(res, 401, 'unauthorized');
      },
    );

    it.each(['X-Key-Id', 'X-Timestamp', 'X-Signature'])(
      'should answer 401 unauthorized when only %s is missing',
      async (header) => {
        const signed = await merchantSignature();
        const headers: Record<string, string> = { ...signed };
        delete headers[header];
        const res = await listTransactions({ sign: false, headers });
        expectError(res, 401, 'unauthorized');
      },
    );

    it('should answer 401 unauthorized to an unknown key id', async () => {
      const res = await listTransactions({ sign: { keyId: 'someone-else' } });
      expectError(res, 401, 'unauthorized');
    });

    it('should answer 401 invalid_signature to a signature made with another secret', async () => {
      const res = await listTransactions({ sign: { secret: 'not-the-secret' } });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 invalid_signature when the body changed after signing', async () => {
      const body = paymentBody();
      const raw = JSON.stringify(body);
      const res = await api.call('POST', '/payments/initialize', undefined, {
        rawBody: raw,
        signedBody: JSON.stringify(body, null, 1),
      });
      expectError(res, 401, 'invalid_signature');
    });

    it('should not process a request whose body changed after signing', async () => {
      const reference = uniqueRef('pay');
      const raw = JSON.stringify(paymentBody({ reference }));
      await api.call('POST', '/payments/initialize', undefined, {
        rawBody: raw,
        signedBody: `${raw} `,
      });
      expectError(await api.call('GET', `/payments/verify/${reference}`), 404, 'not_found');
    });

    it('should answer 401 invalid_signature to a body-less request signed over a body', async () => {
      const res = await listTransactions({ signedBody: '{}' });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 invalid_signature to a signature that is not hex', async () => {
      const res = await listTransactions({ headers: { 'X-Signature': 'z'.repeat(64) } });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 invalid_signature to a timestamp that is not unix seconds', async () => {
      const res = await listTransactions({ headers: { 'X-Timestamp': 'yesterday' } });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 invalid_signature to a timestamp more than 300 s in the past', async () => {
      const res = await listTransactions({ sign: { timestamp: nowSeconds() - 310 } });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 invalid_signature to a timestamp more than 300 s in the future', async () => {
      const res = await listTransactions({ sign: { timestamp: nowSeconds() + 310 } });
      expectError(res, 401, 'invalid_signature');
    });

    it('should accept a timestamp 290 s in the past', async () => {
      const res = await listTransactions({ sign: { timestamp: nowSeconds() - 290 } });
      expectSuccess(res);
    });

    it('should accept a timestamp 290 s in the future', async () => {
      const res = await listTransactions({ sign: { timestamp: nowSeconds() + 290 } });
      expectSuccess(res);
    });

    it('should check freshness against the real clock, not the advanced sandbox clock', async () => {
      await api.advance(86_400);
      const fresh = await listTransactions();
      expectSuccess(fresh);
      const sandboxNow = Math.floor(Date.parse((await api.state()).now) / 1000);
      const stale = await listTransactions({ sign: { timestamp: sandboxNow } });
      expectError(stale, 401, 'invalid_signature');
    });

    it('should accept the same signature headers twice (no replay rejection)', async () => {
      const headers = { ...(await merchantSignature()) };
      const first = await listTransactions({ sign: false, headers });
      const second = await listTransactions({ sign: false, headers });
      expectSuccess(first);
      expectSuccess(second);
    });

    it('should let a resent signed POST reach the duplicate rule (409, not 401)', async () => {
      const raw = JSON.stringify(paymentBody());
      const headers = { ...(await merchantSignature(raw)) };
      const first = await api.call('POST', '/payments/initialize', undefined, {
        rawBody: raw,
        sign: false,
        headers,
      });
      const second = await api.call('POST', '/payments/initialize', undefined, {
        rawBody: raw,
        sign: false,
        headers,
      });
      expectSuccess(first);
      expectError(second, 409, 'duplicate_reference');
    });

    it('should verify the exact bytes, accepting JSON with unusual whitespace', async () => {
      const reference = uniqueRef('pay');
      const raw = JSON.stringify(paymentBody({ reference }), null, 3);
      const res = await api.call('POST', '/payments/initialize', undefined, { rawBody: raw });
      expectSuccess(res);
      expect(res.body.reference).toBe(reference);
    });

    it('should accept an upper-case hex signature', async () => {
      const signed = await merchantSignature();
      const res = await listTransactions({
        sign: false,
        headers: { ...signed, 'X-Signature': signed['X-Signature'].toUpperCase() },
      });
      expectSuccess(res);
    });

    it('should answer 401 invalid_signature to a truncated signature', async () => {
      const signed = await merchantSignature();
      const res = await listTransactions({
        sign: false,
        headers: { ...signed, 'X-Signature': signed['X-Signature'].slice(0, 62) },
      });
      expectError(res, 401, 'invalid_signature');
    });

    it('should answer 401 unauthorized to an empty key id', async () => {
      const res = await listTransactions({ sign: { keyId: '' } });
      expectError(res, 401, 'unauthorized');
    });

    it('should accept header names in any case', async () => {
      const signed = await merchantSignature();
      const res = await listTransactions({
        sign: false,
        headers: {
          'x-key-id': signed['X-Key-Id'],
          'x-timestamp': signed['X-Timestamp'],
          'x-signature': signed['X-Signature'],
        },
      });
      expectSuccess(res);
    });
  });

  describe('open endpoints', () => {
    it('should serve GET /banks without signature headers', async () => {
      const res = await api.call('GET', '/banks', undefined, { sign: false });
      expectSuccess(res);
      expect(Array.isArray(res.body.data)).toBe(true);
    });

    it('should serve GET /__sandbox/state without signature headers', async () => {
      const res = await api.control('state');
      expect(res.status).toBe(200);
      expect(res.body.currency).toBe('NGN');
    });

    it('should serve POST /__sandbox/clock/advance without signature headers', async () => {
      const res = await api.control('clock/advance', { seconds: 1 });
      expect(res.status).toBe(200);
    });

    it('should serve the checkout page without signature headers', async () => {
      const init = await api.call('POST', '/payments/initialize', paymentBody());
      const res = await fetch(init.body.authorization_url);
      expect(res.status).toBe(200);
    });
  });
});
