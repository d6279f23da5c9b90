/**
 * The shared KV cache cannot be poisoned: a request whose forwarded query or body holds
 * anything its cache key does not cover is either refused (a query parameter the route
 * does not declare: 400, nothing sent upstream, KV untouched) or served by the upstream
 * without reading or writing the entry of the plain request. The real Worker on the real
 * KV namespace (recorded by `kvRecorder`) and the real sandbox's request log.
 */
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ErrorBody,
  fetchGateway,
  gatewayRequest,
  postJson,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { kvRecorder } from './kv-recorder.ts';

useCapturedLogs();
const recorder = kvRecorder();

beforeEach(async () => {
  await recorder.clear();
  // Entries these tests expect to be absent at first, whatever ran before in this storage.
  await Promise.all(
    ['banks:v1:NG', 'banks:v1:default', 'banks:v1:XK'].map((key) => env.CACHE.delete(key)),
  );
});
afterEach(async () => {
  await recorder.clear();
});

interface Sent {
  readonly status: number;
  readonly xCache: string | null;
  readonly body: string;
  /** How many requests reached the sandbox. */
  readonly reached: number;
}

/** Sends `request` under a fresh request id through the recorded KV; waits for its writes. */
async function send(request: (id: string) => Request): Promise<Sent> {
  const id = uniqueRequestId();
  const res = await fetchGateway(request(id), { CACHE: recorder.kv });
  const body = await res.text();
  await recorder.settled();
  return {
    status: res.status,
    xCache: res.headers.get('X-Cache'),
    body,
    reached: (await sandboxRequests(id)).length,
  };
}

const banks = (query: string) => (id: string) =>
  gatewayRequest(`/banks${query}`, { requestId: id });

/** A resolve request with the exact body text `text`. */
const resolveText = (text: string) => (id: string) =>
  gatewayRequest('/banks/resolve', {
    method: 'POST',
    requestId: id,
    headers: { 'Content-Type': 'application/json' },
    body: text,
  });

/** A random 10-digit account number no other test uses. */
function randomAccount(): string {
  return String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999));
}

describe('gateway', () => {
  describe('KV cache poisoning', () => {
    describe('GET /banks with a parameter the route does not declare', () => {
      it.each([
        ['?perPage=1', 'perPage'],
        ['?Country_Code=GH', 'Country_Code'],
        ['?currency=USD', 'currency'],
        ['?country_code=NG&perPage=1', 'perPage'],
      ])('should refuse %s naming %s, without reaching the upstream or KV', async (query, name) => {
        const sent = await send(banks(query));
        const error = JSON.parse(sent.body) as ErrorBody;
        expect({ status: sent.status, code: error.code, issues: error.issues }).toEqual({
          status: 400,
          code: 'validation_failed',
          issues: [{ path: name, message: 'Unknown field' }],
        });
        expect(sent.reached).toBe(0);
        expect(sent.xCache).toBeNull();
        expect(recorder.calls).toEqual([]);
      });
    });

    describe('GET /banks spelt otherwise than its key', () => {
      // `X` codes are user-assigned in ISO 3166: no other test or real country uses XK.
      it.each(['?country_code=X%4B', '?&country_code=XK', '?country_code=XK&'])(
        'should forward %s uncached, and never serve it to ?country_code=XK',
        async (query) => {
          const odd = await send(banks(query));
          expect(odd).toMatchObject({ status: 200, xCache: null, reached: 1 });
          expect(recorder.calls).toEqual([]);
          const plain = await send(banks('?country_code=XK'));
          expect(plain).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
          expect(recorder.calls).toEqual(['get banks:v1:XK', 'put banks:v1:XK']);
          expect(await send(banks(query))).toMatchObject({ xCache: null, reached: 1 });
        },
      );

      it('should keep no query apart from an explicit country', async () => {
        expect(await send(banks(''))).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
        expect(await send(banks(''))).toMatchObject({ status: 200, xCache: 'HIT', reached: 0 });
        const explicit = await send(banks('?country_code=NG'));
        expect(explicit).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
        expect(recorder.calls).toEqual([
          'get banks:v1:default',
          'put banks:v1:default',
          'get banks:v1:default',
          'get banks:v1:NG',
          'put banks:v1:NG',
        ]);
      });
    });

    describe('POST /banks/resolve with more than the key covers', () => {
      const plainOf = (account: string) =>
        JSON.stringify({ bank: '058', account, currency: 'NGN' });
      const variants: readonly [string, (account: string) => string][] = [
        [
          'an extra field',
          (account) => JSON.stringify({ bank: '058', account, currency: 'NGN', extra: 'x' }),
        ],
        [
          'an extra field the upstream might read',
          (account) =>
            JSON.stringify({ bank: '058', account, currency: 'NGN', currency_code: 'GHS' }),
        ],
        [
          'its fields reordered',
          (account) => JSON.stringify({ account, bank: '058', currency: 'NGN' }),
        ],
        ['whitespace', (account) => ` ${plainOf(account)}`],
      ];

      it.each(variants)(
        'should neither read nor store the plain entry for a body with %s',
        async (_, bodyOf) => {
          const account = randomAccount();
          const variant = resolveText(bodyOf(account));
          const plain = resolveText(plainOf(account));
          // The variant first: nothing is stored for the plain body to find.
          expect(await send(variant)).toMatchObject({ status: 200, xCache: null, reached: 1 });
          expect(recorder.calls).toEqual([]);
          expect(await send(plain)).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
          // Then, with the plain body stored, the variant does not read it.
          expect(await send(plain)).toMatchObject({ status: 200, xCache: 'HIT', reached: 0 });
          expect(await send(variant)).toMatchObject({ status: 200, xCache: null, reached: 1 });
          expect(recorder.calls.filter((call) => call.startsWith('put'))).toHaveLength(1);
        },
      );

      it('should refuse a query string, without reaching the upstream or KV', async () => {
        const account = randomAccount();
        const sent = await send((id) =>
          postJson('/banks/resolve?bank=057', JSON.parse(plainOf(account)), { requestId: id }),
        );
        expect(sent).toMatchObject({ status: 400, xCache: null, reached: 0 });
        expect((JSON.parse(sent.body) as ErrorBody).issues).toEqual([
          { path: 'bank', message: 'Unknown field' },
        ]);
        expect(recorder.calls).toEqual([]);
      });
    });
  });
});
