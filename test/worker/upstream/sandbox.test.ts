/**
 * The gateway against the real sandbox emulator served over HTTP (test/global-setup.ts):
 * proves that the signature, the body bytes and the request id reach a verifying upstream.
 * Fault injection (timeouts, injected 503s, dropped connections) is in upstream.test.ts.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import {
  errorBody,
  fetchGateway,
  GATEWAY_ORIGIN,
  gatewayRequest,
  postJson,
  useCapturedLogs,
} from '../helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests assert on values of untyped upstream JSON.
type Json = any;

function uniqueRef(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}

function paymentBody(): Record<string, unknown> {
  return {
    email: 'ada@example.com',
    amount: '5000.00',
    currency: 'NGN',
    reference: uniqueRef('pay'),
  };
}

useCapturedLogs();

describe('gateway', () => {
  describe('against the sandbox', () => {
    it('should be configured with the sandbox as its upstream', () => {
      expect(inject('sandboxUrl')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });

    it('should get a signed POST /payments/initialize accepted', async () => {
      const body = paymentBody();
      const res = await exports.default.fetch(postJson('/payments/initialize', body));
      const json: Json = await res.json();
      expect(res.status, JSON.stringify(json)).toBe(200);
      expect(json.status).toBe('success');
      expect(json.reference).toBe(body.reference);
      expect(typeof json.authorization_url).toBe('string');
    });

    it('should verify the payment it created through the gateway', async () => {
      const body = paymentBody();
      const created = await exports.default.fetch(postJson('/payments/initialize', body));
      expect(created.status).toBe(200);
      const res = await exports.default.fetch(
        gatewayRequest(`/payments/verify/${String(body.reference)}`),
      );
      const json: Json = await res.json();
      expect(res.status, JSON.stringify(json)).toBe(200);
      expect(json.data.reference).toBe(body.reference);
    });

    it('should be rejected by the sandbox when signed with a wrong secret', async () => {
      const res = await fetchGateway(postJson('/payments/initialize', paymentBody()), {
        UPSTREAM_SECRET: 'not-the-sandbox-secret',
      });
      expect(res.status).toBe(401);
      expect((await errorBody(res)).code).toBe('invalid_signature');
    });

    it("should send the request id upstream (the sandbox's 404 body repeats it)", async () => {
      const id = `trace-${crypto.randomUUID()}`;
      const res = await exports.default.fetch(
        gatewayRequest(`/payments/verify/${uniqueRef('missing')}`, {
          headers: { 'X-Request-Id': id },
        }),
      );
      expect(res.status).toBe(404);
      const body = await errorBody(res);
      expect(body.code).toBe('not_found');
      expect(body.message).not.toMatch(/^No route for/);
      expect(body.request_id).toBe(id);
      expect(res.headers.get('X-Request-Id')).toBe(id);
    });

    it('should keep the status and body of an upstream validation error', async () => {
      const res = await exports.default.fetch(
        postJson('/payments/initialize', { email: 'ada@example.com' }),
      );
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.code).toBe('validation_failed');
      expect(body.issues?.map((issue) => issue.path)).toEqual(
        expect.arrayContaining(['amount', 'currency']),
      );
    });

    it('should list banks through the unsigned GET /banks', async () => {
      const res = await exports.default.fetch(gatewayRequest('/banks?country_code=NG'));
      const json: Json = await res.json();
      expect(res.status, JSON.stringify(json)).toBe(200);
      expect(json.status).toBe('success');
      expect(Array.isArray(json.data)).toBe(true);
      expect(json.data.length).toBeGreaterThan(0);
    });
  });

  describe('unreachable upstream', () => {
    it('should answer 502 upstream_unreachable when nothing listens', async () => {
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status'), {
        UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
      });
      expect(res.status).toBe(502);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'upstream_unreachable' });
      expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
    });
  });

  describe('open paths', () => {
    it('should answer /healthz over the default export', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`);
      expect(await res.json()).toEqual({ status: 'ok' });
    });
  });
});
