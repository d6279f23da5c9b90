import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UPSTREAM_ROUTES } from '../../worker/upstream/routes.ts';
import {
  type CapturedLogs,
  captureLogs,
  errorBody,
  fetchThrough,
  gatewayRequest,
  recordingUpstream,
} from './helpers.ts';

// The spec's endpoints (spec: Endpoints), written out independently of the route table.
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

function requestFor(method: string, path: string): Request {
  return method === 'GET'
    ? gatewayRequest(path)
    : gatewayRequest(path, {
        method,
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
}

let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('gateway', () => {
  describe('route table', () => {
    it('should list every endpoint of the spec exactly once', () => {
      const listed = UPSTREAM_ROUTES.map((route) => `${route.method} ${route.pattern}`);
      expect([...listed].sort()).toEqual([...SPEC_ENDPOINTS].sort());
    });

    it('should have unique route names', () => {
      const names = UPSTREAM_ROUTES.map((route) => route.name);
      expect(new Set(names).size).toBe(names.length);
    });

    it('should require an idempotency key exactly on the POSTs that create or move money', () => {
      const required = UPSTREAM_ROUTES.filter((route) => route.idempotency === 'required');
      expect(required.map((route) => `${route.method} ${route.pattern}`).sort()).toEqual(
        [...MONEY_MOVING].sort(),
      );
      for (const route of UPSTREAM_ROUTES.filter((r) => r.idempotency !== 'required')) {
        expect(route.idempotency, route.name).toBe(route.method === 'GET' ? 'none' : 'optional');
      }
    });

    it('should send only GET /banks unsigned', () => {
      const unsigned = UPSTREAM_ROUTES.filter((route) => route.upstreamAuth === 'none');
      expect(unsigned.map((route) => `${route.method} ${route.pattern}`)).toEqual(['GET /banks']);
    });
  });

  describe('proxy routes', () => {
    it.each(UPSTREAM_ROUTES.map((route) => ({ ...route, path: concretePath(route.pattern) })))(
      'should forward $method $path to the same method and path',
      async ({ method, path, name }) => {
        const upstream = recordingUpstream();
        const res = await fetchThrough(upstream, requestFor(method, path));
        expect(res.status, name).toBe(200);
        expect(await res.json()).toEqual({ status: 'success' });
        const { request, url } = upstream.only();
        expect(request.method).toBe(method);
        expect(url.pathname).toBe(path);
      },
    );

    it('should route /refunds/count-by-status to the count, not to a refund lookup', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/refunds/count-by-status'));
      expect(res.status).toBe(200);
      expect(logs.lines().at(-1)).toMatchObject({ route: 'refunds.countByStatus' });
      expect(upstream.only().url.pathname).toBe('/refunds/count-by-status');
    });

    it('should keep the query string unchanged', async () => {
      const upstream = recordingUpstream();
      const search = '?status=success&page=2&page_size=5&customer_email=a%2Bb%40x.com&x=a%20b&x=c';
      await fetchThrough(upstream, gatewayRequest(`/merchants/transactions${search}`));
      expect(upstream.only().url.search).toBe(search);
    });

    it('should forward percent-encoded path segments as received', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, gatewayRequest('/payments/verify/ref%2Fa%20b%3F'));
      expect(upstream.only().url.pathname).toBe('/payments/verify/ref%2Fa%20b%3F');
    });

    it('should drop a trailing slash', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/banks/'));
      expect(res.status).toBe(200);
      expect(upstream.only().url.pathname).toBe('/banks');
    });

    it('should join a base URL with a path prefix without double slashes', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, gatewayRequest('/payments/verify/r1?x=1'), {
        UPSTREAM_BASE_URL: 'https://upstream.test/api/v1/',
      });
      expect(upstream.only().url.href).toBe('https://upstream.test/api/v1/payments/verify/r1?x=1');
    });
  });

  describe('unknown routes', () => {
    it('should answer 404 not_found to an unknown path', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/payments/unknown/deeper/path'));
      expect(res.status).toBe(404);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'not_found' });
      expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
      expect(upstream.requests).toHaveLength(0);
    });

    it('should answer 404 to a path the URL parser collapses (dot segments)', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/payments/verify/%2e%2e'));
      expect(res.status).toBe(404);
      expect(upstream.requests).toHaveLength(0);
    });

    it.each([
      ['GET', '/payments/initialize', 'POST'],
      ['DELETE', '/refunds/count-by-status', 'GET'],
      ['PUT', '/direct-debits/mandates', 'POST'],
      ['POST', '/direct-debits/mandates/m-1/cancel', 'PATCH'],
      ['GET', '/virtual-accounts', 'POST'],
      ['PATCH', '/virtual-accounts/email', 'POST, GET'],
    ])('should answer 405 to %s %s with Allow: %s', async (method, path, allow) => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest(path, { method }));
      expect(res.status).toBe(405);
      expect(res.headers.get('Allow')).toBe(allow);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'method_not_allowed' });
      expect(upstream.requests).toHaveLength(0);
    });
  });
});
