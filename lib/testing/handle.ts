// The request pipeline: settle, read, route, size, faults, authenticate, handle, errors, log.
import { checkBodySize, DEFAULT_MAX_BODY_BYTES, readCapped } from '../internal/json-body.ts';
import { REQUEST_ID_HEADER, resolveRequestId } from '../internal/request-id.ts';
import { authenticate } from './auth.ts';
import type { SandboxCore } from './core.ts';
import { applyFaults } from './faults.ts';
import { notFound, SandboxHttpError } from './http-error.ts';
import { isLoggedPath, logRequest } from './request-log.ts';
import { errorResponse } from './respond.ts';
import { matchRoute } from './router.ts';
import { ROUTES } from './routes.ts';
import { settleDue } from './settlement.ts';

/**
 * Rejection of `Sandbox.fetch` when fault injection drops the connection: the request
 * was processed (and committed) but its answer is lost, like a reset socket. A
 * `TypeError`, as `fetch` rejects on network errors.
 */
export class ConnectionDroppedError extends TypeError {
  override name = 'ConnectionDroppedError';
}

/**
 * Answers one request. Due items settle first (lazily, so in-process use needs no
 * ticks). API endpoints see injected faults: latency, then a 503 before anything is
 * processed, or a drop after it was. A body over 64 KiB is refused (413) once the route
 * is known, before anything else looks at it. Every response carries `X-Request-Id`
 * (the caller's when it is 1 to 128 visible ASCII characters, else a new UUID). Every
 * request outside `/__sandbox/*` and `/checkout/*` is added to the request log once
 * answered (or dropped), whatever its status.
 *
 * @param core - the sandbox.
 * @param request - the incoming request.
 * @returns the response; errors are rendered as `{ status: 'error', message, code,
 *   issues?, request_id }` bodies, as the gateway renders them.
 * @throws {ConnectionDroppedError} when `drop_rate` picks this request.
 */
export async function handleRequest(core: SandboxCore, request: Request): Promise<Response> {
  const requestId = resolveRequestId(request.headers);
  const receivedAt = core.now();
  const url = new URL(request.url);
  let rawBody: Uint8Array = new Uint8Array();
  let drop = false;
  let response: Response;
  try {
    settleDue(core);
    // Read before routing so the request log shows the body of a 404, 405 or 503 too;
    // capped, so an oversized upload is never buffered whole.
    rawBody = await readCapped(request, DEFAULT_MAX_BODY_BYTES);
    const match = matchRoute(ROUTES, request.method, url.pathname);
    if (match.kind === 'not_found') throw notFound(`No route for ${url.pathname}`);
    if (match.kind === 'method_not_allowed') {
      throw new SandboxHttpError(
        405,
        'method_not_allowed',
        `Method ${request.method} is not allowed on ${url.pathname}`,
        { headers: { Allow: match.allow.join(', ') } },
      );
    }
    const { route, params } = match;
    // Before the signature check, which would refuse the cut-off bytes as a bad signature.
    checkBodySize(request.headers, rawBody.byteLength, DEFAULT_MAX_BODY_BYTES);
    if (route.access === 'signed' || route.access === 'public') {
      drop = await applyFaults(core.state.faults, core.options.random);
    }
    if (route.access === 'signed') await authenticate(core.options, request.headers, rawBody);
    // Time passed while awaiting; settle again so the handler sees the current state.
    settleDue(core);
    response = await route.handler({ core, request, url, params, rawBody, requestId });
  } catch (error) {
    response = errorResponse(error, requestId);
  }
  response.headers.set(REQUEST_ID_HEADER, requestId);
  if (isLoggedPath(url.pathname)) {
    const status = drop ? null : response.status;
    logRequest(core, { request, url, rawBody, requestId, receivedAt, status });
  }
  if (drop) throw new ConnectionDroppedError('Injected fault: connection dropped after processing');
  return response;
}
