import { waitUntil } from 'cloudflare:workers';
import type { RequestContext } from '../http/context.ts';
import { logEvent } from '../http/log.ts';
import type { CachePolicy } from '../routes/route.ts';

/** What is kept in KV beside the body of a cached upstream answer. */
interface CachedMetadata {
  /** The upstream's `Content-Type`. */
  readonly content_type: string | null;
  /** When the response was stored, in epoch milliseconds (for `Age`). */
  readonly stored_at: number;
}

/** A cached upstream 200 answer. */
export interface CachedResponse {
  readonly body: ArrayBuffer;
  readonly metadata: CachedMetadata;
}

/**
 * Reads a cached response. A KV failure (outage, quota, limits) is logged and reads as
 * `'error'`: the cache must never fail the request.
 *
 * @param kv - the `CACHE` namespace.
 * @param key - from worker/cache/keys.ts.
 * @param policy - which cache, for the log.
 * @param context - the request's context, for the log.
 * @returns the response, `undefined` when absent, `'error'` when KV failed.
 */
export async function readCached(
  kv: KVNamespace,
  key: string,
  policy: CachePolicy,
  context: RequestContext,
): Promise<CachedResponse | undefined | 'error'> {
  try {
    const found = await kv.getWithMetadata<CachedMetadata>(key, 'arrayBuffer');
    if (found.value === null || found.metadata === null) return undefined;
    return { body: found.value, metadata: found.metadata };
  } catch (error) {
    logCacheFailure('read', policy, context, error);
    return 'error';
  }
}

/**
 * Stores a response for `ttlSec` seconds after the response is sent (`waitUntil`), so
 * the caller never waits for the write; a failed write is logged, never thrown.
 *
 * @param kv - the `CACHE` namespace.
 * @param key - from worker/cache/keys.ts.
 * @param answer - body and metadata.
 * @param ttlSec - lifetime in seconds (at least 60, KV's minimum).
 * @param policy - which cache, for the log.
 * @param context - the request's context, for the log.
 */
export function writeCached(
  kv: KVNamespace,
  key: string,
  answer: CachedResponse,
  ttlSec: number,
  policy: CachePolicy,
  context: RequestContext,
): void {
  const write = (async () => {
    try {
      await kv.put(key, answer.body, { expirationTtl: ttlSec, metadata: answer.metadata });
    } catch (error) {
      logCacheFailure('write', policy, context, error);
    }
  })();
  waitUntil(write);
}

// Never the key: for account resolution it is derived from the account number.
function logCacheFailure(
  operation: 'read' | 'write',
  policy: CachePolicy,
  context: RequestContext,
  error: unknown,
): void {
  logEvent('warn', 'cache_failed', {
    request_id: context.requestId,
    route: context.routeName ?? null,
    cache: policy,
    operation,
    error_message: error instanceof Error ? error.message : String(error),
  });
}
