/**
 * The cached routes (`GET /banks`, `POST /banks/resolve`) when KV fails: the upstream
 * answers, and the cache works again once KV does. The real Worker runs on the real KV
 * namespace wrapped by `faultyKv`; a country code and an account number no other test
 * uses keep each test's cache entry its own.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { resolveCacheKey } from '../../../worker/cache/keys.ts';
import { type FaultyKv, faultyKv } from '../fault-bindings.ts';
import {
  fetchGateway,
  gatewayRequest,
  postJson,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const logs = useCapturedLogs();

/** Sends a request under a fresh id; the response, its `X-Cache`, and how many calls reached the sandbox. */
async function send(
  request: (id: string) => Request,
  cache: KVNamespace = env.CACHE,
): Promise<{ status: number; xCache: string | null; body: unknown; reached: number }> {
  const id = uniqueRequestId();
  const res = await fetchGateway(request(id), { CACHE: cache });
  return {
    status: res.status,
    xCache: res.headers.get('X-Cache'),
    body: await res.json(),
    reached: (await sandboxRequests(id)).length,
  };
}

/** Waits until the `waitUntil` write of a cache entry lands in KV. */
async function settledWrite(prefix: string): Promise<void> {
  await vi.waitFor(async () => {
    const { keys } = await env.CACHE.list({ prefix });
    if (keys.length === 0) throw new Error(`${prefix} not stored yet`);
  });
}

function failures(operation: 'read' | 'write'): unknown[] {
  return logs
    .lines()
    .filter((line) => line.event === 'cache_failed' && line.operation === operation);
}

async function expectInjected(kv: FaultyKv, count: number): Promise<void> {
  await vi.waitFor(() => expect(kv.injected).toBe(count));
}

describe('cache stage under KV faults', () => {
  it('should answer GET /banks from the upstream when KV reads fail, and cache again once KV is back', async () => {
    // `X` codes are user-assigned in ISO 3166: no other test or real country uses XF.
    const banks = (id: string) => gatewayRequest('/banks?country_code=XF', { requestId: id });
    await env.CACHE.delete('banks:v1:XF');
    const kv = faultyKv(env.CACHE, { failOn: ['getWithMetadata', 'get'], times: 1 });
    const failed = await send(banks, kv);
    expect(failed).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
    expect(failed.body).toMatchObject({ status: 'success', data: [] });
    await expectInjected(kv, 1);
    expect(failures('read')).toHaveLength(1);
    // KV back: the next request stores the response and the one after is served from it.
    expect(await send(banks, kv)).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
    await settledWrite('banks:v1:XF');
    expect(await send(banks, kv)).toMatchObject({ status: 200, xCache: 'HIT', reached: 0 });
    expect(kv.injected).toBe(1);
  });

  it('should answer POST /banks/resolve when the KV read fails, then when the write fails, and cache again once KV is back', async () => {
    const account = String(1_000_000_000 + Math.floor(Math.random() * 8_999_999_999));
    const body = { bank: '058', account, currency: 'NGN' };
    const resolve = (id: string) => postJson('/banks/resolve', body, { requestId: id });
    const key = await resolveCacheKey(new TextEncoder().encode(JSON.stringify(body)));
    if (key === undefined) throw new Error('not cacheable');
    const readFails = faultyKv(env.CACHE, { failOn: ['getWithMetadata', 'get'] });
    const first = await send(resolve, readFails);
    expect(first).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
    expect(first.body).toMatchObject({ status: 'success', data: { account_number: account } });
    await expectInjected(readFails, 1);
    const writeFails = faultyKv(env.CACHE, { failOn: ['put'] });
    const second = await send(resolve, writeFails);
    expect(second).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
    expect(second.body).toEqual(first.body);
    await expectInjected(writeFails, 1);
    await vi.waitFor(() => expect(failures('write')).toHaveLength(1));
    expect(failures('read')).toHaveLength(1);
    expect((await env.CACHE.list({ prefix: key })).keys).toEqual([]);
    // KV back: stored on the next miss, served from KV after that.
    expect(await send(resolve)).toMatchObject({ status: 200, xCache: 'MISS', reached: 1 });
    await settledWrite(key);
    expect(await send(resolve)).toMatchObject({ status: 200, xCache: 'HIT', reached: 0 });
    expect(logs.text()).not.toContain(account);
  });
});
