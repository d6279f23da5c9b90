import { describe, expect, inject, it } from 'vitest';
import { createAPIError, InsufficientFundsError, NotFoundError } from '../../../lib/api-errors.ts';
import type { RequestLogEntry } from '../../../lib/testing/index.ts';
import { upstreamErrorBody } from '../../../worker/upstream/error-body.ts';
import {
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  postJson,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

useCapturedLogs();

/** Sends a logged request to the sandbox again, directly: what the upstream itself answers. */
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

function uniqueRef(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}

function withKey(init: { requestId: string }) {
  return { ...init, headers: { 'Idempotency-Key': crypto.randomUUID() } };
}

/** A payment made successful through the gateway and the sandbox's complete control. */
async function successfulPayment(): Promise<string> {
  const reference = uniqueRef('p');
  const body = { email: 'ada@example.com', amount: '5000.00', currency: 'NGN', reference };
  const created = await fetchGateway(
    postJson('/payments/initialize', body, withKey({ requestId: uniqueRequestId() })),
  );
  expect(created.status, await created.clone().text()).toBe(200);
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

const SENDERS: [number, string, string, (id: string) => Promise<Response>][] = [
  [
    404,
    'not_found',
    'Payment not found',
    (id) => fetchGateway(gatewayRequest(`/payments/verify/${uniqueRef('x')}`, { requestId: id })),
  ],
  [
    409,
    'insufficient_funds',
    'Insufficient funds',
    (id) =>
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
          withKey({ requestId: id }),
        ),
      ),
  ],
  [
    422,
    'refund_exceeds_payment',
    '',
    async (id) => {
      const body = {
        payment_reference: await successfulPayment(),
        refund_reference: uniqueRef('rf'),
        currency: 'NGN',
        amount: 5000.01,
      };
      return fetchGateway(postJson('/refunds/initialize', body, withKey({ requestId: id })));
    },
  ],
];

describe('gateway', () => {
  describe('upstream error body', () => {
    it.each(SENDERS)(
      'should keep an upstream %i with the gateway error body and the upstream details',
      async (status, code, message, send) => {
        const id = uniqueRequestId();
        const res = await send(id);
        const text = await res.text();
        expect(res.status, text).toBe(status);
        expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
        const reached = await onlySandboxRequest(id);
        expect(reached.status).toBe(status);
        const direct = await replayDirectly(reached);
        expect(direct.status).toBe(status);
        const upstreamBody = (await direct.json()) as Record<string, unknown>;
        const body = JSON.parse(text) as Record<string, unknown>;
        expect(body).toEqual({
          status: 'error',
          message: upstreamBody.message,
          code,
          request_id: id,
          upstream: { status, body: upstreamBody },
        });
        if (message !== '') expect(body.message).toBe(message);
      },
    );

    it('should keep the upstream issues at the top level', async () => {
      const id = uniqueRequestId();
      // The gateway's own validation passes it; the sandbox has no bank 999 for NGN.
      const res = await fetchGateway(
        postJson(
          '/banks/resolve',
          { bank: '999', account: '0123456789', currency: 'NGN' },
          { requestId: id },
        ),
      );
      expect(res.status).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: 'bank', message: 'Unknown bank code for NGN' }],
        upstream: { status: 400, body: { code: 'validation_failed' } },
      });
    });

    it('should still read as the right SDK error, with our request id', async () => {
      const [, , , sendNotFound] = SENDERS[0] ?? [];
      const [, , , sendConflict] = SENDERS[1] ?? [];
      for (const [send, type, code] of [
        [sendNotFound, NotFoundError, 'not_found'],
        [sendConflict, InsufficientFundsError, 'insufficient_funds'],
      ] as const) {
        const id = uniqueRequestId();
        const res = (await send?.(id)) ?? new Response();
        const error = createAPIError({
          method: 'GET',
          url: 'http://gateway.test/x',
          status: res.status,
          headers: new Headers(),
          rawBody: await res.text(),
        });
        expect(error).toBeInstanceOf(type);
        expect(error).toMatchObject({ code, requestId: id });
      }
    });
  });

  describe('upstreamErrorBody', () => {
    const bytes = (text: string) => new TextEncoder().encode(text);

    it('should carry a non-JSON body as text, cut to 1024 characters', () => {
      const html = `<html>${'x'.repeat(2000)}</html>`;
      const body = upstreamErrorBody(
        { status: 502, headers: new Headers(), body: bytes(html) },
        'req-1',
      );
      expect(body).toEqual({
        status: 'error',
        message: 'The payment service answered 502',
        code: 'upstream_error',
        request_id: 'req-1',
        upstream: { status: 502, body: `${html.slice(0, 1024)}…` },
      });
    });

    it('should answer null for an empty body, and ignore a non-array issues', () => {
      expect(
        upstreamErrorBody({ status: 500, headers: new Headers(), body: bytes('') }, 'r').upstream,
      ).toEqual({ status: 500, body: null });
      const body = upstreamErrorBody(
        {
          status: 400,
          headers: new Headers(),
          body: bytes('{"message":"bad","code":"x","issues":"nope"}'),
        },
        'r',
      );
      expect(body).not.toHaveProperty('issues');
      expect(body).toMatchObject({ message: 'bad', code: 'x' });
    });
  });
});
