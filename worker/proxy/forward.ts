import { REQUEST_ID_HEADER } from '../http/request-id.ts';
import { sendUpstream, type UpstreamResponse } from '../upstream/client.ts';
import { upstreamConfig } from '../upstream/config.ts';
import { joinUpstreamUrl } from '../upstream/url.ts';
import type { ProxyExchange, ProxyTerminal } from './pipeline.ts';

/** Caller headers passed upstream; everything else (`Authorization` above all) is dropped. */
export const FORWARDED_REQUEST_HEADERS: readonly string[] = ['content-type', 'accept'];

/** Upstream headers passed back to the caller (the gateway sets its own `X-Request-Id`). */
export const FORWARDED_RESPONSE_HEADERS: readonly string[] = ['content-type', 'retry-after'];

/**
 * The pipeline's terminal: forwards the exchange to `UPSTREAM_BASE_URL` with the same
 * method, path, query string and body bytes, signed unless the route says otherwise,
 * with the request id; answers with the upstream's status and body unchanged
 * (4xx/5xx included) and records the upstream status for the access log.
 *
 * @throws {UpstreamTimeoutError} 504 / {UpstreamUnreachableError} 502 from `sendUpstream`.
 */
export const forwardUpstream: ProxyTerminal = async (exchange) => {
  const { env, context } = exchange;
  const config = upstreamConfig(env);
  const upstream = await sendUpstream(
    {
      method: exchange.route.method,
      url: joinUpstreamUrl(config.baseUrl, exchange.path, exchange.search),
      headers: upstreamHeaders(exchange),
      body: exchange.body,
      auth: exchange.route.upstreamAuth,
    },
    { keyId: env.UPSTREAM_KEY_ID, secret: env.UPSTREAM_SECRET, timeoutMs: config.timeoutMs },
  );
  context.upstreamStatus = upstream.status;
  return callerResponse(upstream);
};

/**
 * The response the caller gets for an upstream answer: the same status and body bytes,
 * with only {@link FORWARDED_RESPONSE_HEADERS} kept (the `finally` stage adds the
 * gateway's own `X-Request-Id`, whatever id the upstream answered with).
 *
 * @param upstream - the upstream's answer, body read.
 * @returns a new response; no body for an empty body or a null-body status (204, 304...).
 */
export function callerResponse(upstream: UpstreamResponse): Response {
  const headers = new Headers();
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const body =
    upstream.body.byteLength === 0 || isNullBodyStatus(upstream.status) ? null : upstream.body;
  return new Response(body, { status: upstream.status, headers });
}

function upstreamHeaders(exchange: ProxyExchange): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = exchange.request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set(REQUEST_ID_HEADER, exchange.context.requestId);
  return headers;
}

function isNullBodyStatus(status: number): boolean {
  return status === 101 || status === 204 || status === 205 || status === 304;
}
