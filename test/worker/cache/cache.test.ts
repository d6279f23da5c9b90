import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { resolveCacheKey } from '../../../worker/cache/keys.ts';
import {
  fetchGateway,
  gatewayRequest,
  postJson,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const logs = useCapturedLogs();

/** The sandbox's account that never resolves (404), lib/testing/banks.ts. */
const UNRESOLVABLE = '0000000000';

/** Sends `request` under a fresh request id; returns the response and how many calls reached the sandbox. */
async function send(
  request: (id: string) => Request,
  overrides: Partial<Env> = {},
): Promise<{ res: Response; reached: number }> {
  const id = uniqueRequestId();
  const res = await fetchGateway(request(id), overrides);
  return { res, reached: (await sandboxRequests(id)).length };
}

/** Waits for the `waitUntil` write of `key` to land in the real KV namespace. */
async function stored(key: string): Promise<KVNamespaceListKey<unknown>> {
  return vi.waitFor(async () => {
    const { keys } = await env.CACHE.list({ prefix: key });
    const found = keys.find((entry) => entry.name === key);
    if (found === undefined) throw new Error(`${key} not stored yet`);
    return found;
  });
}

function banks(query: string) {
  return (id: string) => gatewayRequest(`/banks${query}`, { requestId: id });
}

function resolve(account: string, bank = '058') {
  return (id: string) =>
    postJson('/banks/resolve', { bank, account, currency: 'NGN' }, { requestId: id });
}

/** A random 10-digit account number no other test uses. */
function randomAccount(): string {
  return String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999));
}

/**
 * The real `CACHE` namespace with the `failing` methods rejecting with `message`, as KV
 * does when it is down or over quota (miniflare's KV cannot be made to fail, so the
 * real binding is wrapped: every other method is the real one).
 */
function failingKv(failing: readonly string[], message: string): KVNamespace {
  return new Proxy(env.CACHE, {
    get: (target, name) => {
      if (typeof name === 'string' && failing.includes(name)) {
        return () => Promise.reject(new Error(message));
      }
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('gateway', () => {
  describe('KV cache', () => {
    describe('GET /banks', () => {
      it('should answer the second request from KV, without reaching the upstream', async () => {
        const first = await send(banks('?country_code=KE'));
        expect(first.res.status).toBe(200);
        expect(first.res.headers.get('X-Cache')).toBe('MISS');
        expect(first.reached).toBe(1);
        const body = await first.res.text();
        await stored('banks:v1:KE');
        const second = await send(banks('?country_code=KE'));
        expect(second.res.status).toBe(200);
        expect(second.res.headers.get('X-Cache')).toBe('HIT');
        expect(second.res.headers.get('Content-Type')).toBe(first.res.headers.get('Content-Type'));
        expect(Number(second.res.headers.get('Age'))).toBeGreaterThanOrEqual(0);
        expect(second.reached).toBe(0);
        expect(await second.res.text()).toBe(body);
        expect(logs.lines().filter((line) => line.event === 'request')).toMatchObject([
          { route: 'banks.list', cache: 'miss', upstream_status: 200 },
          { route: 'banks.list', cache: 'hit', upstream_status: null },
        ]);
      });

      it('should keep one entry per country, and no query apart from an explicit NG', async () => {
        await Promise.all(['banks:v1:NG', 'banks:v1:default'].map((k) => env.CACHE.delete(k)));
        const bare = await send(banks(''));
        expect(JSON.parse(await bare.res.text()).data).toContainEqual(
          expect.objectContaining({ bank_name: 'Zenith Bank' }),
        );
        await stored('banks:v1:default');
        expect(await send(banks(''))).toMatchObject({ reached: 0 });
        // Another upstream request (the country named), so another entry.
        const explicit = await send(banks('?country_code=NG'));
        expect(explicit).toMatchObject({ reached: 1 });
        await stored('banks:v1:NG');
        expect(await send(banks('?country_code=NG'))).toMatchObject({ reached: 0 });
        const gh = await send(banks('?country_code=GH'));
        expect(gh.reached).toBe(1);
        const ghBody = JSON.parse(await gh.res.text()) as { data: { bank_name: string }[] };
        expect(ghBody.data.map((bank) => bank.bank_name)).toContain('GCB Bank');
        expect(ghBody.data.map((bank) => bank.bank_name)).not.toContain('Zenith Bank');
      });

      it('should store the entry for BANKS_CACHE_TTL_SEC seconds', async () => {
        const before = Math.floor(Date.now() / 1000);
        await send(banks('?country_code=ZA'), { BANKS_CACHE_TTL_SEC: '120' });
        const entry = await stored('banks:v1:ZA');
        expect(entry.expiration).toBeGreaterThanOrEqual(before + 120);
        expect(entry.expiration).toBeLessThanOrEqual(before + 125);
      });

      it('should not cache at all when BANKS_CACHE_TTL_SEC is 0', async () => {
        const off = { BANKS_CACHE_TTL_SEC: '0' };
        const first = await send(banks('?country_code=CI'), off);
        const second = await send(banks('?country_code=CI'), off);
        expect([first.reached, second.reached]).toEqual([1, 1]);
        expect(second.res.headers.get('X-Cache')).toBeNull();
        expect((await env.CACHE.list({ prefix: 'banks:v1:CI' })).keys).toEqual([]);
      });
    });

    describe('POST /banks/resolve', () => {
      it('should cache per account, for RESOLVE_CACHE_TTL_SEC seconds, under a hashed key', async () => {
        const account = randomAccount();
        const before = Math.floor(Date.now() / 1000);
        const first = await send(resolve(account));
        expect(first.res.status).toBe(200);
        expect(first.reached).toBe(1);
        const key = await resolveCacheKey(
          new TextEncoder().encode(JSON.stringify({ bank: '058', account, currency: 'NGN' })),
        );
        expect(key).toMatch(/^resolve:v1:[0-9a-f]{64}$/);
        const entry = await stored(key ?? '');
        expect(entry.expiration).toBeGreaterThanOrEqual(before + 300);
        expect(entry.expiration).toBeLessThanOrEqual(before + 305);
        const again = await send(resolve(account));
        expect(again.reached).toBe(0);
        expect(again.res.headers.get('X-Cache')).toBe('HIT');
        // Another account, or the same account at another bank, is another entry.
        expect((await send(resolve(randomAccount()))).reached).toBe(1);
        expect((await send(resolve(account, '057'))).reached).toBe(1);
        const keys = (await env.CACHE.list({ prefix: 'resolve:' })).keys.map((k) => k.name);
        expect(keys.join(' ')).not.toContain(account);
        expect(logs.text()).not.toContain(account);
      });

      it('should never cache an error answer', async () => {
        const first = await send(resolve(UNRESOLVABLE));
        const second = await send(resolve(UNRESOLVABLE));
        expect([first.res.status, second.res.status]).toEqual([404, 404]);
        expect([first.reached, second.reached]).toEqual([1, 1]);
        expect(second.res.headers.get('X-Cache')).toBe('MISS');
      });
    });

    describe('KV failure', () => {
      it('should serve from the upstream and log the failure when KV rejects', async () => {
        const account = randomAccount();
        const results = [];
        for (let i = 0; i < 2; i++)
          results.push(
            await send(resolve(account), {
              CACHE: failingKv(
                ['get', 'getWithMetadata', 'put'],
                'KV GET failed: 503 Service Unavailable',
              ),
            }),
          );
        expect(results.map(({ res }) => res.status)).toEqual([200, 200]);
        expect(results.map(({ reached }) => reached)).toEqual([1, 1]);
        const failures = logs.lines().filter((line) => line.event === 'cache_failed');
        expect(failures).toHaveLength(2);
        expect(failures[0]).toMatchObject({
          level: 'warn',
          route: 'banks.resolve',
          cache: 'resolve',
          operation: 'read',
          error_message: 'KV GET failed: 503 Service Unavailable',
        });
        expect(logs.lines().filter((line) => line.event === 'request')).toMatchObject([
          { status: 200, cache: 'error' },
          { status: 200, cache: 'error' },
        ]);
        expect(logs.text()).not.toContain(account);
      });

      it('should answer even when only the write fails', async () => {
        const kv = failingKv(['put'], 'KV PUT failed: 429 Too Many Requests');
        const { res, reached } = await send(banks('?country_code=EG'), { CACHE: kv });
        expect(res.status).toBe(200);
        expect(reached).toBe(1);
        await vi.waitFor(() =>
          expect(logs.lines()).toContainEqual(
            expect.objectContaining({ event: 'cache_failed', operation: 'write' }),
          ),
        );
        expect((await env.CACHE.list({ prefix: 'banks:v1:EG' })).keys).toEqual([]);
      });
    });
  });
});
