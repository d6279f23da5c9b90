/**
 * The validation stage against the real Worker and the real
 * sandbox: what is refused never reaches the sandbox (its request log stays empty), what
 * passes reaches it byte for byte.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES } from '../../../lib/shared.ts';
import {
  captureLogs,
  type ErrorBody,
  errorBody,
  expectConfigurationError,
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';

const JSON_TYPE = { 'Content-Type': 'application/json' };

/** A raw POST (any bytes, any headers) with a fresh Idempotency-Key. */
function post(path: string, body: BodyInit, headers: HeadersInit, requestId: string): Request {
  const all = new Headers(headers);
  all.set('Idempotency-Key', crypto.randomUUID());
  return gatewayRequest(path, { method: 'POST', requestId, headers: all, body });
}

/** Asserts an error body answered by the gateway itself, with nothing sent upstream. */
async function expectRefused(
  response: Response,
  requestId: string,
  status: number,
  code: string,
): Promise<ErrorBody> {
  const body = await errorBody(response);
  expect({ status: response.status, code: body.code }, JSON.stringify(body)).toEqual({
    status,
    code,
  });
  expect(body).toMatchObject({ status: 'error', request_id: requestId });
  expect(body.message).toMatch(/\w/);
  expect(response.headers.get('X-Request-Id')).toBe(requestId);
  expect(await sandboxRequests(requestId)).toEqual([]);
  return body;
}

const uniqueRef = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;
// A fresh account number each time: account resolution is cached per (bank, account).
const resolveBody = () =>
  `{"bank":"058","account":"${String(Math.random()).slice(2, 12).padEnd(10, '0')}","currency":"NGN"}`;
const mandatePath = () => `/direct-debits/mandates/${uniqueRef('m')}`;

beforeEach(() => {
  captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('validation stage', () => {
  describe('body limit', () => {
    it('should answer 413 payload_too_large to a body over 64 KiB', async () => {
      const id = uniqueRequestId();
      const body = `{"email":"${'a'.repeat(DEFAULT_MAX_BODY_BYTES)}@example.com"}`;
      const res = await fetchGateway(post('/virtual-accounts/email', body, JSON_TYPE, id));
      const error = await expectRefused(res, id, 413, 'payload_too_large');
      expect(error.message).toContain('65536');
    });

    it('should accept a body of exactly the configured limit and refuse one byte more', async () => {
      const exact = resolveBody();
      const limit = { MAX_BODY_BYTES: String(exact.length) };
      const okId = uniqueRequestId();
      await fetchGateway(post('/banks/resolve', exact, JSON_TYPE, okId), limit);
      expect((await onlySandboxRequest(okId)).body).toBe(exact);
      const id = uniqueRequestId();
      const res = await fetchGateway(post('/banks/resolve', `${exact} `, JSON_TYPE, id), limit);
      await expectRefused(res, id, 413, 'payload_too_large');
    });

    it.each(['lots', '0', '-5', '1e3'])(
      'should refuse everything (503) when MAX_BODY_BYTES is %j, sending nothing',
      async (value) => {
        const id = uniqueRequestId();
        const res = await fetchGateway(post('/banks/resolve', resolveBody(), JSON_TYPE, id), {
          MAX_BODY_BYTES: value,
        });
        await expectConfigurationError(res, ['MAX_BODY_BYTES']);
        expect(await sandboxRequests(id)).toEqual([]);
      },
    );

    it('should answer 413 when Content-Length declares more than the limit', async () => {
      const id = uniqueRequestId();
      const request = post('/banks/resolve', resolveBody(), JSON_TYPE, id);
      const declared = new Request(request, { headers: new Headers(request.headers) });
      declared.headers.set('Content-Length', '70000');
      const res = await fetchGateway(declared, { MAX_BODY_BYTES: '65536' });
      await expectRefused(res, id, 413, 'payload_too_large');
    });

    it('should answer 413 on a route that takes no body', async () => {
      const id = uniqueRequestId();
      const body = `{}${' '.repeat(200)}`;
      const res = await fetchGateway(
        post(`${mandatePath()}/initiate-activation`, body, JSON_TYPE, id),
        { MAX_BODY_BYTES: '100' },
      );
      await expectRefused(res, id, 413, 'payload_too_large');
    });
  });

  describe('content type', () => {
    it.each([
      ['text/plain'],
      ['application/x-www-form-urlencoded'],
      ['application/jsonp'],
      ['text/json'],
      ['application/json; charset=iso-8859-1'],
      ['multipart/form-data; boundary=x'],
    ])('should answer 415 unsupported_media_type to %s', async (type) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        post('/banks/resolve', resolveBody(), { 'Content-Type': type }, id),
      );
      await expectRefused(res, id, 415, 'unsupported_media_type');
    });

    it('should answer 415 to a body without a Content-Type', async () => {
      const id = uniqueRequestId();
      const request = post('/banks/resolve', new TextEncoder().encode(resolveBody()), {}, id);
      expect(request.headers.get('Content-Type')).toBeNull();
      await expectRefused(await fetchGateway(request), id, 415, 'unsupported_media_type');
    });

    it.each([
      ['application/json'],
      ['application/json; charset=utf-8'],
      ['Application/JSON;charset="UTF-8"'],
      ['application/vnd.edgepay+json'],
    ])('should accept %s and forward it unchanged', async (type) => {
      const id = uniqueRequestId();
      const body = resolveBody();
      await fetchGateway(post('/banks/resolve', body, { 'Content-Type': type }, id));
      const reached = await onlySandboxRequest(id);
      expect(reached.headers['content-type']).toBe(type);
      expect(reached.body).toBe(body);
    });
  });

  describe('malformed body', () => {
    const bytes = (...values: number[]) => new Uint8Array(values);
    it.each([
      ['truncated JSON', '{"bank":"058"', 'Expected a valid JSON document'],
      ['an array', '[]', 'Expected a JSON object'],
      ['a string', '"058"', 'Expected a JSON object'],
      ['null', 'null', 'Expected a JSON object'],
      ['a number', '42', 'Expected a JSON object'],
      ['an empty body', '', 'Expected a JSON object body'],
      ['whitespace', '   ', 'Expected a valid JSON document'],
      [
        'invalid UTF-8',
        bytes(0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d),
        'Expected UTF-8 text',
      ],
      ['a byte order mark', bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d), 'byte order mark'],
      ['a NaN literal', '{"bank":NaN}', 'Expected a valid JSON document'],
    ])(
      'should answer 400 validation_failed to %s with an issue at the root',
      async (_, body, message) => {
        const id = uniqueRequestId();
        const res = await fetchGateway(post('/banks/resolve', body, JSON_TYPE, id));
        const error = await expectRefused(res, id, 400, 'validation_failed');
        expect(error.issues).toHaveLength(1);
        expect(error.issues?.[0]?.path).toBe('');
        expect(error.issues?.[0]?.message).toContain(message);
      },
    );

    it.each([
      ['{"bank":"058","bank":"999","account":"0123456789","currency":"NGN"}', 'bank'],
      ['{"email":"a@example.com","metadata":{"x":1,"y":[{"k":1,"\\u006b":2}]}}', 'metadata.y.0.k'],
    ])('should refuse a duplicate key in %s at %s', async (body, path) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(post('/virtual-accounts/email', body, JSON_TYPE, id));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.issues).toEqual([{ path, message: 'Duplicate key: each key may appear once' }]);
    });
    it('should refuse 60,000 nested arrays without failing', async () => {
      const id = uniqueRequestId();
      const body = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
      const res = await fetchGateway(post('/virtual-accounts/email', body, JSON_TYPE, id));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.issues).toEqual([{ path: '', message: 'Expected a JSON object' }]);
    });

    it('should forward a deeply nested value the schema leaves open', async () => {
      const id = uniqueRequestId();
      const nested = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
      const body = `{"email":"deep@example.com","extra":${nested}}`;
      const res = await fetchGateway(post('/virtual-accounts/email', body, JSON_TYPE, id));
      expect(res.status).toBeLessThan(500);
      expect((await onlySandboxRequest(id)).body).toBe(body.slice(0, 2048));
    });
  });

  describe('schema', () => {
    it('should list every issue with its dot path', async () => {
      const id = uniqueRequestId();
      const body = JSON.stringify({
        email: 'not-an-email',
        amount: '-5',
        currency: 'ngn',
        reference: 'has space',
        callback_url: 'ftp://example.com',
        metadata: ['not', 'an', 'object'],
        merchant_bears_fees: 'yes',
      });
      const res = await fetchGateway(post('/payments/initialize', body, JSON_TYPE, id));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.issues?.map((issue) => issue.path).sort()).toEqual([
        'amount',
        'callback_url',
        'currency',
        'email',
        'merchant_bears_fees',
        'metadata',
        'reference',
      ]);
      expect(error.issues).toContainEqual({
        path: 'currency',
        message: expect.stringContaining('ISO 4217'),
      });
    });

    it('should report each missing field as Required', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(post('/banks/resolve', '{}', JSON_TYPE, id));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.issues).toEqual([
        { path: 'bank', message: 'Required' },
        { path: 'account', message: 'Required' },
        { path: 'currency', message: 'Required' },
      ]);
    });

    it('should report a cross-field rule at its field', async () => {
      const id = uniqueRequestId();
      const body = JSON.stringify({
        customer_name: 'Ada',
        customer_email: 'ada@example.com',
        account_number: '0123456789',
        bank_code: '058',
        start_date: '2030-01-01',
        end_date: '2030-01-15',
        monthly_amount: 100,
        monthly_debit_count: 0,
      });
      const res = await fetchGateway(post('/direct-debits/mandates', body, JSON_TYPE, id));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.issues?.map((issue) => issue.path).sort()).toEqual([
        'end_date',
        'monthly_debit_count',
      ]);
    });
  });

  describe('body-less routes', () => {
    it('should forward an empty body unchanged', async () => {
      const id = uniqueRequestId();
      await fetchGateway(
        gatewayRequest(`${mandatePath()}/cancel`, { method: 'PATCH', requestId: id }),
      );
      const reached = await onlySandboxRequest(id);
      expect({ method: reached.method, body: reached.body }).toEqual({ method: 'PATCH', body: '' });
    });

    it('should forward an empty JSON object unchanged', async () => {
      const id = uniqueRequestId();
      await fetchGateway(post(`${mandatePath()}/initiate-activation`, '{ }', JSON_TYPE, id));
      expect((await onlySandboxRequest(id)).body).toBe('{ }');
    });

    it.each([
      ['{"otp":"123"}', 400, 'validation_failed'],
      ['[]', 400, 'validation_failed'],
      ['not json', 400, 'validation_failed'],
    ])('should refuse %s', async (body, status, code) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        post(`${mandatePath()}/initiate-activation`, body, JSON_TYPE, id),
      );
      const error = await expectRefused(res, id, status, code);
      expect(error.issues?.[0]?.path).toBe('');
    });

    it('should answer 415 to a non-empty body that is not JSON', async () => {
      const id = uniqueRequestId();
      const request = post(
        `${mandatePath()}/initiate-activation`,
        '{}',
        { 'Content-Type': 'text/plain' },
        id,
      );
      await expectRefused(await fetchGateway(request), id, 415, 'unsupported_media_type');
    });
  });

  describe('query string', () => {
    it.each([
      ['/merchants/transactions?page_size=0', 'page_size'],
      ['/merchants/transactions?page_size=101', 'page_size'],
      ['/merchants/transactions?page=0', 'page'],
      ['/merchants/transactions?page=1.5', 'page'],
      ['/merchants/transactions?status=paid', 'status'],
      ['/merchants/transactions?start_date=2025-02-30', 'start_date'],
      ['/merchants/transactions?end_date=yesterday', 'end_date'],
      ['/merchants/refunds?start_date=2025-03-02&end_date=2025-03-01', 'end_date'],
      ['/merchants/disbursements?customer_email=nobody', 'customer_email'],
      ['/merchants/virtual-accounts/transactions?status=', 'status'],
      ['/banks?country_code=ng', 'country_code'],
    ])('should answer 400 to %s with an issue at %s', async (path, field) => {
      const id = uniqueRequestId();
      const error = await expectRefused(
        await fetchGateway(gatewayRequest(path, { requestId: id })),
        id,
        400,
        'validation_failed',
      );
      expect(error.issues?.map((issue) => issue.path)).toEqual([field]);
    });

    it('should list every query issue at once', async () => {
      const id = uniqueRequestId();
      const path = '/merchants/transactions?page=0&page_size=500&status=nope&payment_method=cash';
      const res = await fetchGateway(gatewayRequest(path, { requestId: id }));
      const error = await expectRefused(res, id, 400, 'validation_failed');
      expect(error.message).toBe('The query string is invalid');
      expect(error.issues?.map((issue) => issue.path).sort()).toEqual([
        'page',
        'page_size',
        'payment_method',
        'status',
      ]);
    });

    it('should refuse a repeated parameter at its path', async () => {
      const id = uniqueRequestId();
      const path = '/merchants/refunds?page_size=5&page_size=50';
      const error = await expectRefused(
        await fetchGateway(gatewayRequest(path, { requestId: id })),
        id,
        400,
        'validation_failed',
      );
      expect(error.issues).toEqual([{ path: 'page_size', message: 'Expected a single value' }]);
    });

    it.each([
      ['/banks?perPage=1', 'perPage'],
      ['/banks?Country_Code=GH', 'Country_Code'],
      ['/banks?currency=USD', 'currency'],
      ['/banks?country_code=NG&perPage=1', 'perPage'],
      ['/merchants/transactions?page=2&x=1&x=2', 'x'],
      ['/payments/verify/ref-1?anything=goes', 'anything'],
      ['/banks/resolve?bank=058', 'bank'],
    ])(
      'should refuse %s, a parameter the route does not declare, naming %s',
      async (path, name) => {
        const id = uniqueRequestId();
        const request = path.startsWith('/banks/resolve')
          ? post(path, resolveBody(), JSON_TYPE, id)
          : gatewayRequest(path, { requestId: id });
        const error = await expectRefused(
          await fetchGateway(request),
          id,
          400,
          'validation_failed',
        );
        expect(error.message).toBe('The query string is invalid');
        expect(error.issues).toEqual([{ path: name, message: 'Unknown field' }]);
      },
    );

    it('should forward a valid query string unchanged', async () => {
      const id = uniqueRequestId();
      const query =
        'status=success&page=2&page_size=100&customer_email=a%2Bb%40example.com' +
        '&start_date=2025-01-01T00:00Z&end_date=2025-01-31';
      const res = await fetchGateway(
        gatewayRequest(`/merchants/transactions?${query}`, { requestId: id }),
      );
      expect(res.status).toBe(200);
      expect((await onlySandboxRequest(id)).query).toBe(query);
    });
  });

  describe('valid requests', () => {
    it.each([
      [
        '/payments/initialize',
        `{ "email" : "ada@example.com", "amount":"5000.50","currency":"NGN",\n "reference":"${uniqueRef('p')}", "metadata":{"note":"caf\\u00e9 ☕","n":1.0}, "extra":true }`,
      ],
      [
        '/disbursements/initialize',
        `{"customer_name":"Adá","customer_email":"ada@example.com","reference":"${uniqueRef('t')}","amount":2500.5,"currency":"NGN","destination_bank_code":"058","destination_bank_account":"0123456789","destination_bank_name":"GTBank"}\n`,
      ],
      ['/banks/resolve', `\t${resolveBody()}`],
      ['/virtual-accounts/email', '{"email":"nobody@example.com"}'],
    ])('should forward a valid body to %s byte for byte', async (path, body) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(post(path, body, JSON_TYPE, id));
      const reached = await onlySandboxRequest(id);
      expect(reached.body).toBe(body);
      expect(res.status).toBe(reached.status);
      expect(reached.status).not.toBe(400);
    });
  });
});
