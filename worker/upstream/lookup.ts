// Verify before resend (DESIGN 2, 4.1): find the record a money-moving POST creates.
import { REQUEST_ID_HEADER } from '../http/request-id.ts';
import { sendUpstream, type UpstreamResponse } from './client.ts';
import { upstreamConfig } from './config.ts';
import type { UpstreamRoute } from './routes.ts';
import { joinUpstreamUrl } from './url.ts';

/**
 * The upstream path that finds the record `body` would create on `route`
 * (`route.lookup`), e.g. `/disbursements/verify/<reference>`.
 *
 * @param route - the POST route.
 * @param body - the raw JSON body bytes.
 * @returns the encoded path, or `undefined` when the route has no lookup or the body names no reference.
 */
export function lookupPathOf(
  route: UpstreamRoute,
  body: Uint8Array | undefined,
): string | undefined {
  if (route.lookup === undefined || body === undefined) return undefined;
  try {
    const json: unknown = JSON.parse(new TextDecoder().decode(body));
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
    return route.lookup(json as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/**
 * GETs `path` upstream, signed as every proxied request is, with the request id.
 *
 * @param env - the upstream settings and credentials.
 * @param route - the route whose record is looked up (its upstream auth applies).
 * @param path - from {@link lookupPathOf}.
 * @param requestId - sent as `X-Request-Id`.
 * @returns the upstream answer, body read (any status).
 * @throws {UpstreamTimeoutError} 504 / {UpstreamUnreachableError} 502.
 */
export function lookUpstream(
  env: Env,
  route: UpstreamRoute,
  path: string,
  requestId: string,
): Promise<UpstreamResponse> {
  const config = upstreamConfig(env);
  const headers = new Headers({ Accept: 'application/json' });
  headers.set(REQUEST_ID_HEADER, requestId);
  return sendUpstream(
    {
      method: 'GET',
      url: joinUpstreamUrl(config.baseUrl, path, ''),
      headers,
      body: undefined,
      auth: route.upstreamAuth,
    },
    { keyId: env.UPSTREAM_KEY_ID, secret: env.UPSTREAM_SECRET, timeoutMs: config.timeoutMs },
  );
}
