import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { logEvent } from '../../../worker/http/log.ts';
import { OWN_ROUTES } from '../../../worker/routes/table.ts';
import { faultyD1 } from '../fault-bindings.ts';
import {
  CALLER_NAME,
  CALLER_TOKEN,
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  postJson,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { adminRequest } from '../routes/admin/admin-helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';

const logs = useCapturedLogs();

const UPSTREAM_SECRET = 'sandbox-secret';

function requestLines(): Record<string, unknown>[] {
  return logs.lines().filter((line) => line.event === 'request');
}

describe('gateway', () => {
  describe('access log', () => {
    it('should write one line per request with every field', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }));
      expect(res.status).toBe(200);
      const lines = requestLines();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toEqual({
        level: 'info',
        event: 'request',
        request_id: id,
        caller: CALLER_NAME,
        method: 'GET',
        route: 'refunds.countByStatus',
        status: 200,
        upstream_status: 200,
        error_code: null,
        idempotency: null,
        cache: null,
        latency_ms: expect.any(Number),
      });
      expect(lines[0]?.latency_ms).toBeGreaterThanOrEqual(0);
    });

    it("should name the gateway's own routes as the route table does", async () => {
      await fetchGateway(gatewayRequest('/healthz', { token: null }));
      await fetchGateway(gatewayRequest('/openapi.json'));
      await fetchGateway(adminRequest('GET', '/admin/subscriptions'));
      // A forged webhook still reaches its handler (the signature is checked there): 401.
      await fetchGateway(
        gatewayRequest('/webhooks', {
          token: null,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Signature': 'forged' },
          body: '{}',
        }),
      );
      expect(requestLines().map((line) => [line.route, line.status])).toEqual([
        ['health', 200],
        ['openapi', 200],
        ['admin.subscriptions.list', 200],
        ['webhooks.ingest', 401],
      ]);
      const names = new Set<string>(OWN_ROUTES.map((route) => route.name));
      for (const line of requestLines()) expect(names.has(String(line.route))).toBe(true);
    });

    it('should record the cache outcome and the idempotency outcome', async () => {
      await fetchGateway(gatewayRequest('/banks?country_code=KE'));
      const key = crypto.randomUUID();
      const payment = {
        email: 'ada@example.com',
        amount: '5000.00',
        currency: 'NGN',
        reference: `p_${crypto.randomUUID().replaceAll('-', '')}`,
      };
      const res = await fetchGateway(
        postJson('/payments/initialize', payment, { headers: { 'Idempotency-Key': key } }),
      );
      expect(res.status).toBe(200);
      const [banks, initialize] = requestLines();
      expect(banks).toMatchObject({ route: 'banks.list', cache: 'miss', idempotency: null });
      expect(initialize).toMatchObject({ route: 'payments.initialize', cache: null });
      expect(['stored', 'replayed', 'recovered']).toContain(initialize?.idempotency);
      expect(logs.text()).not.toContain(key);
    });

    it('should never log the token, the signing secret, the signature or the account number', async () => {
      const id = uniqueRequestId();
      const account = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999));
      const res = await fetchGateway(
        postJson('/banks/resolve', { bank: '058', account, currency: 'NGN' }, { requestId: id }),
      );
      expect(res.status).toBe(200);
      const signature = (await onlySandboxRequest(id)).headers['x-signature'];
      expect(signature).toMatch(/^[0-9a-f]{64}$/);
      const text = logs.text();
      expect(text).not.toContain(CALLER_TOKEN);
      expect(text).not.toContain(UPSTREAM_SECRET);
      expect(text).not.toContain(signature);
      expect(text).not.toContain(account);
      expect(requestLines()).toMatchObject([{ request_id: id, route: 'banks.resolve' }]);
    });
  });

  describe('server errors', () => {
    it('should log why it answered 500 (D1 failed), never in the body', async () => {
      const id = uniqueRequestId();
      const request = await webhookRequest(JSON.stringify(envelope()));
      request.headers.set('X-Request-Id', id);
      const res = await fetchGateway(request, {
        DB: faultyD1(env.DB, { failOn: /INSERT INTO webhook_events/ }),
      });
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ code: 'internal_error', message: 'Internal error' });
      expect(body).not.toMatch(/D1|stored/);
      expect(logs.lines()).toContainEqual({
        level: 'error',
        event: 'server_error',
        request_id: id,
        route: 'webhooks.ingest',
        status: 500,
        error_code: 'internal_error',
        detail: 'webhook event not stored',
        cause_name: 'Error',
        cause_message: expect.stringContaining('injected fault'),
      });
    });

    it('should log an invalid setting once, not each 503 it causes', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await fetchGateway(gatewayRequest('/banks'), {
          RELAY_RETENTION_DAYS: 'a month',
        });
        expect(res.status).toBe(503);
      }
      // Each refused request has its access line; the problem itself is logged once.
      expect(logs.lines().filter((line) => line.event !== 'request')).toEqual([
        {
          level: 'error',
          event: 'config_invalid',
          setting: 'RELAY_RETENTION_DAYS',
          problem: 'expected a whole number of days from 1 to 3650',
        },
      ]);
    });

    it('should log the network error behind a 502', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', { requestId: id }),
        {
          UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
        },
      );
      expect(res.status).toBe(502);
      expect(await res.text()).not.toMatch(/connection lost/i);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          event: 'server_error',
          request_id: id,
          status: 502,
          error_code: 'upstream_unreachable',
          cause_message: expect.stringMatching(/connection/i),
        }),
      );
    });
  });

  describe('logEvent', () => {
    it('should write each line through the console method of its level', () => {
      const plain = vi.spyOn(console, 'log').mockImplementation(() => {});
      for (const level of ['info', 'warn', 'error'] as const) {
        const method = vi.spyOn(console, level).mockImplementation(() => {});
        logEvent(level, 'probe', { n: 1 });
        expect(method).toHaveBeenCalledTimes(1);
        expect(JSON.parse(String(method.mock.calls[0]?.[0]))).toEqual({
          level,
          event: 'probe',
          n: 1,
        });
      }
      expect(plain).not.toHaveBeenCalled();
    });

    it('should mask account numbers in every string field but the request id', () => {
      logEvent('error', 'unexpected_error', {
        request_id: '0123456789',
        error_message: 'could not resolve 0123456789',
        attempts: 2,
      });
      expect(logs.lines()).toEqual([
        {
          level: 'error',
          event: 'unexpected_error',
          request_id: '0123456789',
          error_message: 'could not resolve ******6789',
          attempts: 2,
        },
      ]);
    });
  });
});
