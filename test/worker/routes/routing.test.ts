import { describe, expect, inject, it } from 'vitest';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  errorBody,
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

// The spec's endpoints (docs/endpoints.md), written out independently of the route table.
const SPEC_ENDPOINTS = [
  'POST /payments/initialize',
  'GET /payments/verify/:reference',
  'GET /merchants/transactions',
  'POST /disbursements/initialize',
  'GET /disbursements/verify/:reference',
  'GET /merchants/disbursements',
  'POST /refunds/initialize',
  'GET /refunds/count-by-status',
  'GET /refunds/transactions/:payment_reference',
  'GET /refunds/:refund_reference',
  'GET /merchants/refunds',
  'GET /banks',
  'POST /banks/resolve',
  'POST /direct-debits/mandates',
  'POST /direct-debits/mandates/:mandate_reference/initiate-activation',
  'POST /direct-debits/mandates/:mandate_reference/validate-activation',
  'GET /direct-debits/mandates/:mandate_reference',
  'PATCH /direct-debits/mandates/:mandate_reference/cancel',
  'POST /direct-debits/debit',
  'POST /direct-debits/disburse',
  'GET /direct-debits/status/:payment_reference',
  'POST /virtual-accounts',
  'GET /virtual-accounts/:account_reference',
  'POST /virtual-accounts/email',
  'GET /merchants/virtual-accounts/transactions',
];

const MONEY_MOVING = [
  'POST /payments/initialize',
  'POST /disbursements/initialize',
  'POST /refunds/initialize',
  'POST /direct-debits/mandates',
  'POST /direct-debits/debit',
  'POST /direct-debits/disburse',
  'POST /virtual-accounts',
];

function concretePath(pattern: string): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => `${name}-1`);
}

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;
const day = (offset: number) =>
  new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

// A body each POST's schema accepts (the gateway validates before forwarding); the
// upstream may still refuse it (unknown references): these tests look at what arrives.
const VALID_BODIES: Record<string, () => Record<string, unknown> | undefined> = {
  '/payments/initialize': () => ({ email: 'ada@example.com', amount: '1.00', currency: 'NGN' }),
  '/disbursements/initialize': () => ({
    reference: unique('tr'),
    amount: 1,
    currency: 'NGN',
    customer_name: 'Grace Hopper',
    customer_email: 'grace@example.com',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  }),
  '/refunds/initialize': () => ({
    payment_reference: 'payment-1',
    refund_reference: unique('rf'),
    currency: 'NGN',
    amount: 1,
  }),
  // A fresh account each time, so the resolution cache never answers in the upstream's place.
  '/banks/resolve': () => ({
    bank: '058',
    account: String(Math.floor(1e9 + Math.random() * 8e9)),
    currency: 'NGN',
  }),
  '/direct-debits/mandates': () => ({
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    account_number: '0123456789',
    bank_code: '058',
    start_date: day(2),
    end_date: day(40),
    monthly_amount: 100,
    monthly_debit_count: 2,
  }),
  '/direct-debits/mandates/mandate_reference-1/validate-activation': () => ({
    mandate_reference: 'mandate_reference-1',
    param1: 'otp',
    value1: '123456',
    param2: 'pin',
    value2: '1234',
  }),
  '/direct-debits/debit': () => ({
    mandate_reference: 'mandate-1',
    debit_amount: 1,
    narration: 'Routing',
    customer_email: 'ada@example.com',
    payment_reference: unique('dd'),
  }),
  '/direct-debits/disburse': () => ({
    reference: unique('db'),
    amount: 1,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
  }),
  '/virtual-accounts': () => ({
    account_reference: unique('va'),
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    currency_code: 'NGN',
    bvn: '12345678901',
  }),
  '/virtual-accounts/email': () => ({ email: 'ada@example.com' }),
};

function requestFor(method: string, path: string, requestId: string): Request {
  if (method === 'GET') return gatewayRequest(path, { requestId });
  const body = VALID_BODIES[path]?.();
  return gatewayRequest(path, {
    method,
    requestId,
    headers: {
      'Idempotency-Key': crypto.randomUUID(),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const logs = useCapturedLogs();

describe('gateway', () => {
  describe('route table', () => {
    it('should list every endpoint of the spec exactly once', () => {
      const listed = PROXY_ROUTES.map((route) => `${route.method} ${route.pattern}`);
      expect([...listed].sort()).toEqual([...SPEC_ENDPOINTS].sort());
    });

    it('should have unique route names', () => {
      const names = PROXY_ROUTES.map((route) => route.name);
      expect(new Set(names).size).toBe(names.length);
    });

    it('should require an idempotency key exactly on the POSTs that create or move money', () => {
      const required = PROXY_ROUTES.filter((route) => route.idempotency === 'required');
      expect(required.map((route) => `${route.method} ${route.pattern}`).sort()).toEqual(
        [...MONEY_MOVING].sort(),
      );
      for (const route of PROXY_ROUTES.filter((r) => r.idempotency !== 'required')) {
        expect(route.idempotency, route.name).toBe(route.method === 'GET' ? 'none' : 'optional');
      }
    });

    it('should send only GET /banks unsigned', () => {
      const unsigned = PROXY_ROUTES.filter((route) => route.endpoint.unsigned === true);
      expect(unsigned.map((route) => `${route.method} ${route.pattern}`)).toEqual(['GET /banks']);
    });
  });

  describe('proxy routes', () => {
    it.each(PROXY_ROUTES.map((route) => ({ ...route, path: concretePath(route.pattern) })))(
      'should forward $method $path to the same method and path',
      async ({ method, path, name }) => {
        const id = uniqueRequestId();
        const res = await fetchGateway(requestFor(method, path, id));
        const reached = await onlySandboxRequest(id);
        expect({ method: reached.method, path: reached.path }, name).toEqual({ method, path });
        // The sandbox matched one of its routes and accepted the signature (or, for
        // GET /banks, needed none); whatever it answered came back unchanged.
        expect(reached.status, name).not.toBe(401);
        expect(reached.status, name).not.toBe(405);
        expect(res.status, name).toBe(reached.status);
        const body = (await res.json()) as { message?: string };
        expect(body.message ?? '', name).not.toMatch(/^No route for/);
      },
    );

    it('should route /refunds/count-by-status to the count, not to a refund lookup', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }));
      expect(res.status).toBe(200);
      expect(logs.lines().at(-1)).toMatchObject({ route: 'refunds.countByStatus' });
      expect((await onlySandboxRequest(id)).path).toBe('/refunds/count-by-status');
    });

    it('should keep the query string unchanged', async () => {
      const id = uniqueRequestId();
      const query = 'status=success&page=2&page_size=5&customer_email=a%2Bb%40x.com';
      await fetchGateway(gatewayRequest(`/merchants/transactions?${query}`, { requestId: id }));
      expect((await onlySandboxRequest(id)).query).toBe(query);
    });

    it('should decode a path parameter and send it encoded once, as one segment', async () => {
      const id = uniqueRequestId();
      await fetchGateway(gatewayRequest('/payments/verify/r%65f-%3F%23%25', { requestId: id }));
      expect((await onlySandboxRequest(id)).path).toBe('/payments/verify/ref-%3F%23%25');
    });

    it.each([
      ['an encoded "/" (a second segment upstream)', '/payments/verify/ref%2Fa'],
      ['encoded dot segments', '/payments/verify/..%2F..%2Fmerchants%2Ftransactions'],
      ['an encoded space', '/payments/verify/a%20b'],
      ['a malformed escape', '/payments/verify/a%zz'],
      ['bytes that are not UTF-8', '/payments/verify/a%FF'],
      ["another endpoint's literal path", '/refunds/count-by-statu%73'],
    ])('should answer 400 for %s and send nothing', async (_name, path) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest(path, { requestId: id }));
      expect(res.status).toBe(400);
      expect(await errorBody(res)).toMatchObject({ code: 'validation_failed' });
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should answer 404 for an encoded dot segment, which URL parsing resolves away', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/payments/verify/%2e%2E', { requestId: id }));
      expect(res.status).toBe(404);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should drop a trailing slash', async () => {
      const id = uniqueRequestId();
      // Not /banks: the bank list may be answered from the KV cache without reaching the upstream.
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status/', { requestId: id }),
      );
      expect(res.status).toBe(200);
      expect((await onlySandboxRequest(id)).path).toBe('/refunds/count-by-status');
    });

    it('should join a base URL with a path prefix without double slashes', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/merchants/refunds?page=2', { requestId: id }),
        { UPSTREAM_BASE_URL: `${inject('sandboxUrl')}/api/v1/` },
      );
      // The sandbox has no /api/v1 prefix: its 404 passes through, and its log shows the URL.
      expect(res.status).toBe(404);
      expect(await onlySandboxRequest(id)).toMatchObject({
        method: 'GET',
        path: '/api/v1/merchants/refunds',
        query: 'page=2',
      });
    });
  });

  describe('unknown routes', () => {
    it('should answer 404 not_found to an unknown path', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/payments/unknown/deeper/path', { requestId: id }),
      );
      expect(res.status).toBe(404);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'not_found', request_id: id });
      expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should answer 404 to a path the URL parser collapses (dot segments)', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/payments/verify/%2e%2e', { requestId: id }));
      expect(res.status).toBe(404);
      expect(res.headers.get('X-Request-Id')).toBe(id);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it.each([
      ['GET', '/payments/initialize', 'POST'],
      ['DELETE', '/refunds/count-by-status', 'GET'],
      ['PUT', '/direct-debits/mandates', 'POST'],
      ['POST', '/direct-debits/mandates/m-1/cancel', 'PATCH'],
      ['GET', '/virtual-accounts', 'POST'],
      ['PATCH', '/virtual-accounts/email', 'POST, GET'],
    ])('should answer 405 to %s %s with Allow: %s', async (method, path, allow) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest(path, { method, requestId: id }));
      expect(res.status).toBe(405);
      expect(res.headers.get('Allow')).toBe(allow);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'method_not_allowed', request_id: id });
      expect(await sandboxRequests(id)).toEqual([]);
    });
  });
});
