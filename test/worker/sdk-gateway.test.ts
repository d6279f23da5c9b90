/**
 * The SDK in gateway mode: bearer token instead of the secret, talking to the
 * real gateway Worker, which signs and forwards to the real sandbox over HTTP.
 */
import { exports } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, PaymentsClient } from '../../lib/index.ts';
import { CALLER_TOKEN, captureLogs, GATEWAY_ORIGIN, sandboxRequests } from './helpers.ts';

interface Sent {
  method: string;
  path: string;
  headers: Headers;
}

/** The real gateway as the SDK's fetch, noting what each attempt sent. */
function gatewayFetch(sent: Sent[], failFirstPost = false): typeof fetch {
  let failed = false;
  return async (input, init) => {
    const request = new Request(input, init);
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      headers: request.headers,
    });
    if (failFirstPost && !failed && request.method === 'POST') {
      failed = true;
      // The connection fails before the request leaves: nothing reached the gateway.
      throw new TypeError('fetch failed: connection refused');
    }
    return exports.default.fetch(request);
  };
}

const transfer = (reference: string) => ({
  reference,
  amount: 750,
  currency: 'NGN',
  customer_name: 'Grace Hopper',
  customer_email: 'grace@example.com',
  destination_bank_code: '058',
  destination_bank_account: '0123456789',
  destination_bank_name: 'GTBank',
});

beforeEach(() => {
  captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('SDK through the gateway', () => {
  it('should send a bearer token and an idempotency key, never a signature', async () => {
    const sent: Sent[] = [];
    const client = new PaymentsClient({
      bearerToken: CALLER_TOKEN,
      baseUrl: GATEWAY_ORIGIN,
      fetch: gatewayFetch(sent),
    });
    const reference = `gw-${crypto.randomUUID()}`;
    const created = await client.transfers.initialize(transfer(reference));
    expect(created).toMatchObject({ reference, status: 'processing', amount: 750 });
    expect((await client.transfers.verify(reference)).fee).toBe(10);
    const [post, get] = sent;
    expect(post?.headers.get('authorization')).toBe(`Bearer ${CALLER_TOKEN}`);
    expect(post?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(post?.headers.has('x-signature')).toBe(false);
    expect(get?.headers.has('idempotency-key')).toBe(false);
    // The gateway signed it: the sandbox saw a signature and answered 200.
    const upstream = await sandboxRequests(post?.headers.get('x-request-id') ?? '');
    expect(
      upstream.map((entry) => [entry.status, entry.headers['x-signature'] !== undefined]),
    ).toEqual([[200, true]]);
  });

  it('should reuse the idempotency key when it resends', async () => {
    const sent: Sent[] = [];
    const client = new PaymentsClient({
      bearerToken: CALLER_TOKEN,
      baseUrl: GATEWAY_ORIGIN,
      fetch: gatewayFetch(sent, true),
      random: () => 0,
    });
    const reference = `gw-retry-${crypto.randomUUID()}`;
    await client.transfers.initialize(transfer(reference), { idempotencyKey: `key-${reference}` });
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /disbursements/initialize',
      `GET /disbursements/verify/${reference}`,
      'POST /disbursements/initialize',
    ]);
    expect(
      sent.filter((s) => s.method === 'POST').map((s) => s.headers.get('idempotency-key')),
    ).toEqual([`key-${reference}`, `key-${reference}`]);
  });

  it('should raise AuthenticationError for a wrong token', async () => {
    const client = new PaymentsClient({
      bearerToken: 'wrong',
      baseUrl: GATEWAY_ORIGIN,
      fetch: gatewayFetch([]),
    });
    await expect(client.banks.list()).rejects.toBeInstanceOf(AuthenticationError);
  });
});
