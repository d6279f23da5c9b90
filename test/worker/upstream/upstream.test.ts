/**
 * The gateway's upstream exchange against the real sandbox emulator over HTTP: what it
 * sends (read back from the sandbox's request log), what it passes back to the caller,
 * and how it fails (the fault sandbox). This is the only file that sets faults on the
 * fault sandbox, so parallel files never see them.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { verifyRequestSignature } from '../../../lib/signing.ts';
import type { RequestLogEntry } from '../../../lib/testing/index.ts';
import { callerResponse } from '../../../worker/proxy/forward.ts';
import { sendUpstream } from '../../../worker/upstream/client.ts';
import {
  errorBody,
  expectConfigurationError,
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  postJson,
  sandboxRequests,
  setFaults,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const SECRET = 'sandbox-secret';
const logs = useCapturedLogs();

function uniqueRef(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}

function paymentBody(): Record<string, unknown> {
  return {
    email: 'ada@example.com',
    amount: '5000.00',
    currency: 'NGN',
    reference: uniqueRef('p'),
  };
}

/** Verifies a logged request's signature over its logged body, as the service would. */
function verifyLogged(entry: RequestLogEntry): Promise<void> {
  return verifyRequestSignature({
    secret: SECRET,
    body: entry.body,
    headers: new Headers(entry.headers),
  });
}

/** Sends a logged request to the sandbox again, directly, with the headers that matter. */
async function replayDirectly(entry: RequestLogEntry): Promise<Response> {
  const headers = new Headers();
  for (const name of ['content-type', 'x-request-id', 'x-key-id', 'x-timestamp', 'x-signature']) {
    const value = entry.headers[name];
    if (value !== undefined) headers.set(name, value);
  }
  const query = entry.query === '' ? '' : `?${entry.query}`;
  return fetch(`${inject('sandboxUrl')}${entry.path}${query}`, {
    method: entry.method,
    headers,
    ...(entry.body === '' ? {} : { body: entry.body }),
  });
}

/** A payment made successful through the gateway and the sandbox's complete control. */
async function successfulPayment(): Promise<string> {
  const body = paymentBody();
  const created = await fetchGateway(
    postJson('/payments/initialize', body, { headers: { 'Idempotency-Key': crypto.randomUUID() } }),
  );
  expect(created.status, await created.clone().text()).toBe(200);
  const reference = String(body.reference);
  const completed = await fetch(
    `${inject('sandboxUrl')}/__sandbox/payments/${reference}/complete`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ outcome: 'success' }),
    },
  );
  expect(completed.status, await completed.text()).toBe(200);
  return reference;
}

describe('gateway', () => {
  describe('upstream request', () => {
    it('should forward the exact body bytes, signed with the merchant secret', async () => {
      const id = uniqueRequestId();
      const raw = `{ "email" : "ada@example.com",\n  "amount": "5000.00" ,"currency":"NGN", "reference": "${uniqueRef('p')}", "metadata": {"note": "adé ✓"}}  `;
      const res = await fetchGateway(
        gatewayRequest('/payments/initialize', {
          method: 'POST',
          requestId: id,
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
          body: raw,
        }),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      const reached = await onlySandboxRequest(id);
      expect(reached.body).toBe(raw);
      expect(reached.headers['x-key-id']).toBe('sandbox-key');
      expect(reached.headers['x-timestamp']).toMatch(/^\d{10}$/);
      expect(reached.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
      await expect(verifyLogged(reached)).resolves.toBeUndefined();
      expect(reached.status).toBe(200);
    });

    it('should sign with the current time', async () => {
      const id = uniqueRequestId();
      await fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }));
      const reached = await onlySandboxRequest(id);
      expect(reached.status).toBe(200);
      const timestamp = Number(reached.headers['x-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
    });

    it('should sign a body-less request over the empty body', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest(`/payments/verify/${uniqueRef('missing')}`, { requestId: id }),
      );
      const reached = await onlySandboxRequest(id);
      expect(reached.body).toBe('');
      await expect(verifyLogged(reached)).resolves.toBeUndefined();
      // The sandbox accepted the signature and looked the payment up.
      expect(reached.status).toBe(404);
      expect((await errorBody(res)).code).toBe('not_found');
    });

    it('should sign every request afresh', async () => {
      const ids = [uniqueRequestId(), uniqueRequestId()];
      const reached: RequestLogEntry[] = [];
      for (const id of ids) {
        const body = {
          bank: '058',
          // A fresh account each time: an account resolved before would be a cache hit.
          account: String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999)),
          currency: 'NGN',
        };
        await fetchGateway(postJson('/banks/resolve', body, { requestId: id }));
        reached.push(await onlySandboxRequest(id));
      }
      const [first, second] = reached;
      expect(first?.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(first?.headers['x-signature']).not.toBe(second?.headers['x-signature']);
      for (const entry of reached) {
        await expect(verifyLogged(entry)).resolves.toBeUndefined();
        expect(entry.status).not.toBe(401);
      }
    });

    it('should send GET /banks unsigned', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/banks?country_code=NG', { requestId: id }));
      expect(res.status).toBe(200);
      const reached = await onlySandboxRequest(id);
      expect(reached.query).toBe('country_code=NG');
      expect(reached.status).toBe(200);
      expect(reached.headers).not.toHaveProperty('x-key-id');
      expect(reached.headers).not.toHaveProperty('x-timestamp');
      expect(reached.headers).not.toHaveProperty('x-signature');
    });

    it('should never forward the Authorization header or other caller headers', async () => {
      const id = uniqueRequestId();
      await fetchGateway(
        postJson('/payments/initialize', paymentBody(), {
          requestId: id,
          headers: {
            Cookie: 'session=1',
            'Idempotency-Key': crypto.randomUUID(),
            'X-Forwarded-For': '10.0.0.1',
            'X-Key-Id': 'caller-chosen',
            'X-Signature': 'f'.repeat(64),
          },
        }),
      );
      const reached = await onlySandboxRequest(id);
      expect(reached.headers).not.toHaveProperty('authorization');
      expect(reached.headers).not.toHaveProperty('cookie');
      expect(reached.headers).not.toHaveProperty('idempotency-key');
      expect(reached.headers).not.toHaveProperty('x-forwarded-for');
      expect(reached.headers['x-key-id']).toBe('sandbox-key');
      expect(reached.headers['x-signature']).not.toBe('f'.repeat(64));
      // The sandbox verified the gateway's signature and accepted the payment.
      expect(reached.status).toBe(200);
    });

    it('should keep Content-Type and Accept', async () => {
      const id = uniqueRequestId();
      await fetchGateway(
        gatewayRequest('/virtual-accounts/email', {
          method: 'POST',
          requestId: id,
          headers: {
            'Content-Type': 'application/json; charset=utf-8',
            Accept: 'application/json',
          },
          body: '{"email":"ada@example.com"}',
        }),
      );
      const reached = await onlySandboxRequest(id);
      expect(reached.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(reached.headers.accept).toBe('application/json');
    });

    it('should forward a body-less POST without a body, signed over the empty body', async () => {
      const id = uniqueRequestId();
      await fetchGateway(
        gatewayRequest(`/direct-debits/mandates/${uniqueRef('m')}/initiate-activation`, {
          method: 'POST',
          requestId: id,
        }),
      );
      const reached = await onlySandboxRequest(id);
      expect(reached.method).toBe('POST');
      expect(reached.body).toBe('');
      expect(reached.headers).not.toHaveProperty('content-type');
      await expect(verifyLogged(reached)).resolves.toBeUndefined();
      // Signature accepted; the mandate does not exist.
      expect(reached.status).toBe(404);
    });
  });

  describe('upstream response', () => {
    it('should pass a success body through unchanged', async () => {
      const res = await fetchGateway(gatewayRequest('/banks?country_code=GH'));
      const direct = await fetch(`${inject('sandboxUrl')}/banks?country_code=GH`);
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Type')).toBe(direct.headers.get('Content-Type'));
      const text = await res.text();
      expect(text).toBe(await direct.text());
      expect(JSON.parse(text)).toMatchObject({ status: 'success' });
    });

    it.each([
      [
        400,
        'validation_failed',
        async (id: string) =>
          fetchGateway(
            postJson(
              '/banks/resolve',
              { bank: '999', account: '0123456789', currency: 'NGN' },
              { requestId: id },
            ),
          ),
      ],
      [
        401,
        'invalid_signature',
        async (id: string) =>
          fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }), {
            UPSTREAM_SECRET: 'not-the-sandbox-secret',
          }),
      ],
      [
        404,
        'not_found',
        async (id: string) =>
          fetchGateway(gatewayRequest(`/payments/verify/${uniqueRef('x')}`, { requestId: id })),
      ],
      [
        409,
        'insufficient_funds',
        async (id: string) =>
          fetchGateway(
            postJson(
              '/disbursements/initialize',
              {
                customer_name: 'Ada Obi',
                customer_email: 'ada@example.com',
                reference: uniqueRef('tr'),
                amount: 999_999_999,
                currency: 'NGN',
                destination_bank_code: '058',
                destination_bank_account: '0123456789',
                destination_bank_name: 'GTBank',
                narration: 'Payout',
              },
              { requestId: id, headers: { 'Idempotency-Key': crypto.randomUUID() } },
            ),
          ),
      ],
      [
        422,
        'refund_exceeds_payment',
        async (id: string) => {
          const reference = await successfulPayment();
          const body = {
            payment_reference: reference,
            refund_reference: uniqueRef('rf'),
            currency: 'NGN',
            amount: 5000.01,
          };
          return fetchGateway(
            postJson('/refunds/initialize', body, {
              requestId: id,
              headers: { 'Idempotency-Key': crypto.randomUUID() },
            }),
          );
        },
      ],
    ])('should keep an upstream %i, its body under upstream.body', async (status, code, send) => {
      const id = uniqueRequestId();
      const res = await send(id);
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect(JSON.parse(text)).toMatchObject({ status: 'error', code, request_id: id });
      expect(res.headers.get('X-Request-Id')).toBe(id);
      expect(logs.lines().at(-1)).toMatchObject({
        status,
        upstream_status: status,
        error_code: null,
      });
      // What the sandbox answers to the very request the gateway sent, parsed, under
      // `upstream` (upstream-errors.test.ts checks the whole body shape).
      const reached = await onlySandboxRequest(id);
      expect(reached.status).toBe(status);
      const direct = await replayDirectly(reached);
      expect(direct.status).toBe(status);
      expect(JSON.parse(text).upstream).toEqual({ status, body: await direct.json() });
    });

    it('should pass back only the allowed upstream headers and its own X-Request-Id', async () => {
      const id = uniqueRequestId();
      // A country no other test asks for: the first GET /banks of it is a cache miss.
      const res = await fetchGateway(gatewayRequest('/banks?country_code=KE', { requestId: id }));
      const direct = await replayDirectly(await onlySandboxRequest(id));
      const names = (headers: Headers) => [...headers.keys()].sort();
      // The sandbox answers more than Content-Type (its Date, Keep-Alive, Content-Length...).
      expect(names(direct.headers)).toEqual(
        expect.arrayContaining(['content-type', 'date', 'x-request-id']),
      );
      // Content-Type is the upstream's; the rest are the gateway's own.
      expect(names(res.headers)).toEqual([
        'cache-control',
        'content-type',
        'x-cache',
        'x-content-type-options',
        'x-request-id',
      ]);
      expect(res.headers.get('X-Request-Id')).toBe(id);
    });

    // The sandbox never answers a redirect, a Set-Cookie, a Retry-After or another
    // request id, so the filtering of such answers is tested on `callerResponse` alone.
    describe('callerResponse', () => {
      function upstream(status: number, headers: Record<string, string>, body = '') {
        return { status, headers: new Headers(headers), body: new TextEncoder().encode(body) };
      }

      it('should keep Retry-After and Content-Type, and drop every other header', async () => {
        const res = callerResponse(
          upstream(
            503,
            {
              'Content-Type': 'application/json',
              'Retry-After': '7',
              'Set-Cookie': 'a=1',
              'X-Request-Id': 'upstream-own-id',
            },
            '{"status":"error"}',
          ),
        );
        expect(res.status).toBe(503);
        expect([...res.headers.keys()].sort()).toEqual(['content-type', 'retry-after']);
        expect(res.headers.get('Retry-After')).toBe('7');
        expect(await res.text()).toBe('{"status":"error"}');
      });

      it('should pass a redirect through without its Location', () => {
        const res = callerResponse(upstream(302, { Location: 'https://elsewhere.test/' }));
        expect(res.status).toBe(302);
        expect(res.headers.get('Location')).toBeNull();
      });

      it('should answer no body for a null-body status', () => {
        expect(callerResponse(upstream(204, {}, 'ignored')).body).toBeNull();
      });
    });
  });

  describe('upstream failures', () => {
    afterEach(async () => {
      await setFaults({});
    });

    // Routes the gateway never caches: a cached response would never reach the fault sandbox.
    it('should keep an injected upstream 503 and its body under upstream', async () => {
      await setFaults({ error_rate: 1 });
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', { requestId: id }),
        {
          UPSTREAM_BASE_URL: inject('faultSandboxUrl'),
        },
      );
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'error',
        code: 'internal_error',
        message: 'Injected fault: service unavailable',
        request_id: id,
        upstream: {
          status: 503,
          body: expect.objectContaining({
            status: 'error',
            code: 'internal_error',
            message: 'Injected fault: service unavailable',
          }),
        },
      });
      expect(logs.lines().at(-1)).toMatchObject({ upstream_status: 503, error_code: null });
      expect((await onlySandboxRequest(id, inject('faultSandboxUrl'))).status).toBe(503);
    });

    it('should answer 504 upstream_timeout when the upstream is slower than UPSTREAM_TIMEOUT_MS', async () => {
      await setFaults({ latency_ms: 2000 });
      const started = Date.now();
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status'), {
        UPSTREAM_BASE_URL: inject('faultSandboxUrl'),
        UPSTREAM_TIMEOUT_MS: '200',
      });
      expect(res.status).toBe(504);
      const body = await errorBody(res);
      expect(body).toMatchObject({ status: 'error', code: 'upstream_timeout' });
      expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
      expect(Date.now() - started).toBeLessThan(1500);
    });

    it('should answer 502 upstream_unreachable when the connection drops, after one retry of a GET', async () => {
      await setFaults({ drop_rate: 1 });
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', { requestId: id }),
        {
          UPSTREAM_BASE_URL: inject('faultSandboxUrl'),
        },
      );
      expect(res.status).toBe(502);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({
        status: 'error',
        code: 'upstream_unreachable',
        message: 'The payment service could not be reached',
      });
      expect(text).not.toMatch(/dropped|connection lost/i);
      expect(logs.lines().at(-1)).toMatchObject({
        status: 502,
        error_code: 'upstream_unreachable',
      });
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          event: 'upstream_retry',
          request_id: id,
          reason: 'upstream_unreachable',
        }),
      );
      // The sandbox processed the request, dropped the connection, and again: twice, no more.
      const reached = await sandboxRequests(id, inject('faultSandboxUrl'));
      expect(reached.map((entry) => [entry.path, entry.status])).toEqual([
        ['/refunds/count-by-status', null],
        ['/refunds/count-by-status', null],
      ]);
    });

    it('should answer a GET whose first connection dropped from its retry', async () => {
      await setFaults({ drop_rate: 0.5 });
      // Each try has a 1 in 4 chance of drop-then-answer: 60 tries all missing it is ~3e-8.
      for (let attempt = 0; attempt < 60; attempt++) {
        const id = uniqueRequestId();
        const res = await fetchGateway(
          gatewayRequest('/refunds/count-by-status', { requestId: id }),
          {
            UPSTREAM_BASE_URL: inject('faultSandboxUrl'),
          },
        );
        const reached = await sandboxRequests(id, inject('faultSandboxUrl'));
        if (reached.length === 2 && reached[1]?.status === 200) {
          expect(reached[0]?.status).toBeNull();
          expect(res.status).toBe(200);
          expect(await res.json()).toMatchObject({ status: 'success' });
          return;
        }
        // Never more than one retry, and no retry after a response.
        expect(reached.length).toBe(reached[0]?.status === null ? 2 : 1);
      }
      expect.fail('no request was answered on its retry');
    });

    it('should never retry a POST whose connection dropped', async () => {
      await setFaults({ drop_rate: 1 });
      const id = uniqueRequestId();
      const res = await fetchGateway(
        postJson('/virtual-accounts/email', { email: 'ada@example.com' }, { requestId: id }),
        { UPSTREAM_BASE_URL: inject('faultSandboxUrl') },
      );
      expect(res.status).toBe(502);
      expect((await errorBody(res)).code).toBe('upstream_unreachable');
      const reached = await sandboxRequests(id, inject('faultSandboxUrl'));
      expect(reached.map((entry) => [entry.method, entry.status])).toEqual([['POST', null]]);
      expect(logs.lines().map((line) => line.event)).not.toContain('upstream_retry');
    });

    it('should not retry a GET that timed out', async () => {
      await setFaults({ latency_ms: 1000 });
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', { requestId: id }),
        {
          UPSTREAM_BASE_URL: inject('faultSandboxUrl'),
          UPSTREAM_TIMEOUT_MS: '100',
        },
      );
      expect(res.status).toBe(504);
      // Let the slow sandbox finish logging the one request it got.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(await sandboxRequests(id, inject('faultSandboxUrl'))).toHaveLength(1);
    });

    it.each([
      ['UPSTREAM_BASE_URL', 'not a url'],
      ['UPSTREAM_SECRET', ''],
      ['UPSTREAM_TIMEOUT_MS', 'soon'],
    ])(
      'should answer 503 configuration_error, sending nothing, when %s is %j',
      async (name, value) => {
        const id = uniqueRequestId();
        const res = await fetchGateway(
          gatewayRequest('/refunds/count-by-status', { requestId: id }),
          { [name]: value },
        );
        await expectConfigurationError(res, [name]);
        expect(await sandboxRequests(id)).toEqual([]);
        expect(logs.lines()).toContainEqual(
          expect.objectContaining({ event: 'config_invalid', setting: name }),
        );
      },
    );

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
      const res = await fetchGateway(request);
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

  // Answers the sandbox cannot give (a redirect, a body stalling after the headers) are
  // tested on the upstream client alone, with a `fetch` that gives them.
  describe('sendUpstream', () => {
    const options = { keyId: 'sandbox-key', secret: SECRET, timeoutMs: 50 } as const;
    const request = {
      method: 'GET',
      url: new URL('http://upstream.test/banks'),
      headers: new Headers(),
      body: undefined,
      auth: 'none',
    } as const;

    it('should not follow upstream redirects', async () => {
      const seen: (RequestInit | undefined)[] = [];
      const answer = await sendUpstream(request, {
        ...options,
        fetch: async (_input, init) => {
          seen.push(init);
          return new Response(null, { status: 302, headers: { Location: 'https://x.test/' } });
        },
      });
      expect(answer.status).toBe(302);
      expect(seen.map((init) => init?.redirect)).toEqual(['manual']);
    });

    it('should time out when the body stalls after the headers', async () => {
      const stalled = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"status":'));
        },
      });
      await expect(
        sendUpstream(request, { ...options, fetch: async () => new Response(stalled) }),
      ).rejects.toMatchObject({ name: 'UpstreamTimeoutError', status: 504 });
    });
  });
});
