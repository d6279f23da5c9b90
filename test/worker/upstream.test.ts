import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyRequestSignature } from '../../lib/signing.ts';
import {
  type CapturedLogs,
  captureLogs,
  errorBody,
  fetchThrough,
  gatewayRequest,
  postJson,
  recordingUpstream,
} from './helpers.ts';

const SECRET = 'sandbox-secret';
let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('gateway', () => {
  describe('upstream request', () => {
    it('should forward the exact body bytes, signed with the merchant secret', async () => {
      const upstream = recordingUpstream();
      const raw = '{ "email" : "adé@example.com",\n  "amount": "5000.00" ,"currency":"NGN"}  ';
      await fetchThrough(
        upstream,
        gatewayRequest('/payments/initialize', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: raw,
        }),
      );
      const { request, body } = upstream.only();
      expect(body).toEqual(new TextEncoder().encode(raw));
      expect(request.headers.get('X-Key-Id')).toBe('sandbox-key');
      expect(request.headers.get('X-Timestamp')).toMatch(/^\d{10}$/);
      expect(request.headers.get('X-Signature')).toMatch(/^[0-9a-f]{64}$/);
      await expect(
        verifyRequestSignature({ secret: SECRET, body, headers: request.headers }),
      ).resolves.toBeUndefined();
    });

    it('should sign with the current time', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, gatewayRequest('/refunds/count-by-status'));
      const timestamp = Number(upstream.only().request.headers.get('X-Timestamp'));
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
    });

    it('should sign a body-less request over the empty body', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, gatewayRequest('/payments/verify/ref-1'));
      const { request, body } = upstream.only();
      expect(body).toHaveLength(0);
      await expect(
        verifyRequestSignature({ secret: SECRET, body: '', headers: request.headers }),
      ).resolves.toBeUndefined();
    });

    it('should sign every request afresh', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, postJson('/banks/resolve', { bank: '058', account: '1' }));
      await fetchThrough(upstream, postJson('/banks/resolve', { bank: '058', account: '2' }));
      const [first, second] = upstream.requests;
      expect(first?.request.headers.get('X-Signature')).not.toBe(
        second?.request.headers.get('X-Signature'),
      );
      for (const { request, body } of upstream.requests) {
        await expect(
          verifyRequestSignature({ secret: SECRET, body, headers: request.headers }),
        ).resolves.toBeUndefined();
      }
    });

    it('should send GET /banks unsigned', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(upstream, gatewayRequest('/banks?country_code=NG'));
      const { request, url } = upstream.only();
      expect(url.search).toBe('?country_code=NG');
      expect(request.headers.get('X-Key-Id')).toBeNull();
      expect(request.headers.get('X-Timestamp')).toBeNull();
      expect(request.headers.get('X-Signature')).toBeNull();
    });

    it('should never forward the Authorization header or other caller headers', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(
        upstream,
        postJson(
          '/payments/initialize',
          { amount: '1.00' },
          {
            headers: {
              Cookie: 'session=1',
              'Idempotency-Key': 'key-1',
              'X-Forwarded-For': '10.0.0.1',
              'X-Key-Id': 'caller-chosen',
            },
          },
        ),
      );
      const { request } = upstream.only();
      expect(request.headers.get('Authorization')).toBeNull();
      expect(request.headers.get('Cookie')).toBeNull();
      expect(request.headers.get('Idempotency-Key')).toBeNull();
      expect(request.headers.get('X-Forwarded-For')).toBeNull();
      expect(request.headers.get('X-Key-Id')).toBe('sandbox-key');
    });

    it('should keep Content-Type and Accept', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(
        upstream,
        gatewayRequest('/virtual-accounts/email', {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json; charset=utf-8',
            Accept: 'application/json',
          },
          body: '{"email":"a@b.c"}',
        }),
      );
      const { request } = upstream.only();
      expect(request.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
      expect(request.headers.get('Accept')).toBe('application/json');
    });

    it('should forward a body-less POST without a body, signed over the empty body', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(
        upstream,
        gatewayRequest('/direct-debits/mandates/m-1/initiate-activation', { method: 'POST' }),
      );
      const { request, body } = upstream.only();
      expect(request.method).toBe('POST');
      expect(body).toHaveLength(0);
      await expect(
        verifyRequestSignature({ secret: SECRET, body: '', headers: request.headers }),
      ).resolves.toBeUndefined();
    });

    it('should not follow upstream redirects', async () => {
      const upstream = recordingUpstream(
        () => new Response(null, { status: 302, headers: { Location: 'https://elsewhere.test/' } }),
      );
      const res = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(upstream.only().request.redirect).toBe('manual');
      expect(res.status).toBe(302);
      expect(upstream.requests).toHaveLength(1);
    });
  });

  describe('upstream response', () => {
    it('should pass a success body through unchanged', async () => {
      const raw = '{"status":"success","data":[{"bank_name":"GTBank","bank_code":"058"}]}';
      const upstream = recordingUpstream(
        () => new Response(raw, { headers: { 'Content-Type': 'application/json' } }),
      );
      const res = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('application/json');
      expect(await res.text()).toBe(raw);
    });

    it.each([
      [400, 'validation_failed'],
      [401, 'invalid_signature'],
      [404, 'not_found'],
      [409, 'insufficient_funds'],
      [422, 'refund_exceeds_payment'],
    ])('should keep an upstream %i and its body', async (status, code) => {
      const raw = JSON.stringify({ status: 'error', message: 'm', code, request_id: 'r-up' });
      const upstream = recordingUpstream(
        () => new Response(raw, { status, headers: { 'Content-Type': 'application/json' } }),
      );
      const res = await fetchThrough(
        upstream,
        gatewayRequest('/payments/verify/x', { headers: { 'X-Request-Id': 'r-gw' } }),
      );
      expect(res.status).toBe(status);
      expect(await res.text()).toBe(raw);
      expect(res.headers.get('X-Request-Id')).toBe('r-gw');
      expect(logs.lines().at(-1)).toMatchObject({
        status,
        upstream_status: status,
        error_code: null,
      });
    });

    it('should keep an upstream 503 with its Retry-After', async () => {
      const upstream = recordingUpstream(
        () =>
          new Response('{"status":"error","message":"down","code":"x"}', {
            status: 503,
            headers: {
              'Content-Type': 'application/json',
              'Retry-After': '7',
              'Set-Cookie': 'a=1',
            },
          }),
      );
      const res = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(res.status).toBe(503);
      expect(res.headers.get('Retry-After')).toBe('7');
      expect(res.headers.get('Set-Cookie')).toBeNull();
    });
  });

  describe('upstream failures', () => {
    it('should answer 504 upstream_timeout when the upstream does not answer in time', async () => {
      const upstream = recordingUpstream(() => new Promise<Response>(() => {}));
      const res = await fetchThrough(upstream, gatewayRequest('/banks'), {
        UPSTREAM_TIMEOUT_MS: '50',
      });
      expect(res.status).toBe(504);
      expect(await errorBody(res)).toMatchObject({ status: 'error', code: 'upstream_timeout' });
    });

    it('should answer 504 upstream_timeout when the body stalls after the headers', async () => {
      const upstream = recordingUpstream(
        () =>
          new Response(
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode('{"status":'));
              },
            }),
            { headers: { 'Content-Type': 'application/json' } },
          ),
      );
      const res = await fetchThrough(upstream, gatewayRequest('/banks'), {
        UPSTREAM_TIMEOUT_MS: '50',
      });
      expect(res.status).toBe(504);
      const body = await errorBody(res);
      expect(body.code).toBe('upstream_timeout');
      expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
    });

    it('should answer 502 upstream_unreachable when the connection fails', async () => {
      const upstream = recordingUpstream(() => {
        throw new TypeError('Network connection lost.');
      });
      const res = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(res.status).toBe(502);
      expect(await errorBody(res)).toMatchObject({
        status: 'error',
        code: 'upstream_unreachable',
        message: 'The payment service could not be reached',
      });
      expect(logs.lines().at(-1)).toMatchObject({
        status: 502,
        error_code: 'upstream_unreachable',
      });
    });

    it('should answer 500 internal_error when UPSTREAM_BASE_URL is not a URL', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/banks'), {
        UPSTREAM_BASE_URL: 'not a url',
      });
      expect(res.status).toBe(500);
      expect((await errorBody(res)).code).toBe('internal_error');
      expect(upstream.requests).toHaveLength(0);
    });

    it('should answer 500 internal_error when the signing secret is missing', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/refunds/count-by-status'), {
        UPSTREAM_SECRET: '',
      });
      expect(res.status).toBe(500);
      expect((await errorBody(res)).code).toBe('internal_error');
      expect(upstream.requests).toHaveLength(0);
    });

    it('should use the default timeout when UPSTREAM_TIMEOUT_MS is invalid', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/banks'), {
        UPSTREAM_TIMEOUT_MS: 'soon',
      });
      expect(res.status).toBe(200);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'config_invalid', setting: 'UPSTREAM_TIMEOUT_MS' }),
      );
    });

    it('should log an unexpected error and answer 500 without its details', async () => {
      const request = gatewayRequest('/payments/initialize', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'boom-1' },
        body: new ReadableStream({
          pull(controller) {
            controller.error(new Error('body exploded at /srv/secret/path'));
          },
        }),
      });
      const res = await fetchThrough(recordingUpstream(), request);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        status: 'error',
        message: 'Internal error',
        code: 'internal_error',
        request_id: 'boom-1',
      });
      expect(text).not.toContain('exploded');
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          event: 'unexpected_error',
          request_id: 'boom-1',
          error_message: 'body exploded at /srv/secret/path',
        }),
      );
    });
  });
});
