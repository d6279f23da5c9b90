import { REQUEST_ID_HEADER } from '../../lib/shared.ts';
import { settingsIn } from '../http/context.ts';
import { UpstreamUnreachableError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { jsonResponse } from '../http/respond.ts';
import { sendUpstream, type UpstreamRequest, type UpstreamResponse } from '../upstream/client.ts';
import { upstreamErrorBody } from '../upstream/error-body.ts';
import { joinUpstreamUrl } from '../upstream/url.ts';
import type { ProxyExchange, ProxyTerminal } from './pipeline.ts';

/** Caller headers passed upstream; everything else (`Authorization` above all) is dropped. */
const FORWARDED_REQUEST_HEADERS: readonly string[] = ['content-type', 'accept'];

/** Upstream headers passed back to the caller (the gateway sets its own `X-Request-Id`). */
export const FORWARDED_RESPONSE_HEADERS: readonly string[] = ['content-type', 'retry-after'];

/**
 * The pipeline's terminal: forwards the exchange to `UPSTREAM_BASE_URL` with the same
 * method, path, query string and body bytes, signed unless the route says otherwise,
 * with the request id, and records the upstream status for the access log. A GET whose
 * connection fails is sent once more (reads are safe to repeat); a timeout is not
 * retried (the caller already waited the whole `UPSTREAM_TIMEOUT_MS`), and neither is
 * a POST or PATCH (it may have landed). Success responses pass through unchanged; errors
 * (4xx/5xx) keep their status with the body of {@link upstreamErrorBody}.
 *
 * @throws {UpstreamTimeoutError} 504 / {UpstreamUnreachableError} 502 from `sendUpstream`.
 */
export const forwardUpstream: ProxyTerminal = async (exchange) => {
  const { context } = exchange;
  const config = settingsIn(context).upstream;
  const request: UpstreamRequest = {
    method: exchange.route.method,
    url: joinUpstreamUrl(new URL(config.baseUrl), exchange.path, exchange.search),
    headers: upstreamHeaders(exchange),
    body: exchange.body,
    auth: exchange.route.endpoint.unsigned ? 'none' : 'signed',
  };
  const options = { keyId: config.keyId, secret: config.secret, timeoutMs: config.timeoutMs };
  let upstream: UpstreamResponse;
  try {
    upstream = await sendUpstream(request, options);
  } catch (error) {
    if (!(error instanceof UpstreamUnreachableError) || request.method !== 'GET') throw error;
    logEvent('warn', 'upstream_retry', {
      request_id: context.requestId,
      route: context.routeName ?? null,
      reason: 'upstream_unreachable',
    });
    upstream = await sendUpstream(request, options);
  }
  context.upstreamStatus = upstream.status;
  return upstream.status >= 400
    ? upstreamErrorResponse(upstream, context.requestId)
    : callerResponse(upstream);
};

/**
 * The response the caller gets for an upstream answer below 400: the same status and
 * body bytes, with only {@link FORWARDED_RESPONSE_HEADERS} kept (the `finally` stage
 * adds the gateway's own `X-Request-Id`, whatever id the upstream answered with).
 *
 * @param upstream - the upstream's response, body read.
 * @returns a new response; no body for an empty body or a null-body status (204, 304...).
 *
 * @internal Exported for the tests, which call it directly.
 */
export function callerResponse(upstream: UpstreamResponse): Response {
  const body =
    upstream.body.byteLength === 0 || isNullBodyStatus(upstream.status) ? null : upstream.body;
  return new Response(body, { status: upstream.status, headers: forwardedHeaders(upstream) });
}

/**
 * The response the caller gets for an upstream 4xx/5xx: the upstream's status and
 * `Retry-After`, the gateway's error body of {@link upstreamErrorBody} as JSON.
 *
 * @param upstream - the upstream's error response, body read.
 * @param requestId - the gateway's request id, repeated in the body.
 */
function upstreamErrorResponse(upstream: UpstreamResponse, requestId: string): Response {
  const headers = forwardedHeaders(upstream);
  headers.delete('content-type');
  return jsonResponse(upstreamErrorBody(upstream, requestId), { status: upstream.status, headers });
}

function forwardedHeaders(upstream: UpstreamResponse): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return headers;
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
