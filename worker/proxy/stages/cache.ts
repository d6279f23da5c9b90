import { cacheKeyFor } from '../../cache/keys.ts';
import { type CachedResponse, readCached, writeCached } from '../../cache/store.ts';
import { settingsIn } from '../../http/context.ts';
import type { ProxyRoute } from '../../routes/route.ts';
import type { ProxyStage } from '../pipeline.ts';

/** Response header telling whether the response came from the gateway's KV cache. */
const CACHE_STATUS_HEADER = 'X-Cache';

/**
 * The proxy stage caching upstream answers in KV, last
 * before the upstream call, on routes with a cache policy: `GET /banks` per country for
 * `BANKS_CACHE_TTL_SEC`, `POST /banks/resolve` per (bank, account, currency) for
 * `RESOLVE_CACHE_TTL_SEC`. A request is cached only when what is forwarded is exactly
 * the request its key stands for (worker/cache/keys.ts): an answer is never reused for
 * another upstream request. Only upstream 200 answers are stored (body and
 * `Content-Type`); a hit answers them with `X-Cache: HIT` and `Age`, a cacheable request
 * served by the upstream carries `X-Cache: MISS`, one that is not cacheable neither. A
 * KV failure never fails the request: it is logged, recorded as `cache: error` and the
 * upstream answers.
 *
 * @param route - the route being proxied.
 * @returns the stage, or `undefined` when the route has no cache policy.
 */
export function cacheStage(route: ProxyRoute): ProxyStage | undefined {
  const policy = route.cache;
  if (policy === undefined) return undefined;
  return async (exchange, next) => {
    const { env, context } = exchange;
    const ttlSec = settingsIn(context).cacheTtlSec[policy];
    const key =
      ttlSec === 0
        ? undefined
        : await cacheKeyFor(policy, exchange.search, exchange.query, exchange.content);
    if (key === undefined) return next();
    const cached = await readCached(env.CACHE, key, policy, context);
    if (cached !== undefined && cached !== 'error') {
      context.cache = 'hit';
      return hitResponse(cached);
    }
    context.cache = cached === 'error' ? 'error' : 'miss';
    const response = await next();
    const headers = new Headers(response.headers);
    headers.set(CACHE_STATUS_HEADER, 'MISS');
    if (response.status !== 200)
      return new Response(response.body, { status: response.status, headers });
    const body = await response.arrayBuffer();
    const metadata = { content_type: response.headers.get('Content-Type'), stored_at: Date.now() };
    // After a failed read KV is likely down: skip the write rather than log twice.
    if (cached !== 'error')
      writeCached(env.CACHE, key, { body, metadata }, ttlSec, policy, context);
    return new Response(body, { status: 200, headers });
  };
}

function hitResponse(cached: CachedResponse): Response {
  const headers = new Headers({ [CACHE_STATUS_HEADER]: 'HIT' });
  if (cached.metadata.content_type !== null) {
    headers.set('Content-Type', cached.metadata.content_type);
  }
  const ageSec = Math.max(0, Math.floor((Date.now() - cached.metadata.stored_at) / 1000));
  headers.set('Age', String(ageSec));
  return new Response(cached.body, { status: 200, headers });
}
