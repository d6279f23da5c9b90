import type { IRequest } from 'itty-router';
import { REQUEST_ID_HEADER } from '../../lib/shared.ts';
import { CONSOLE_SECURITY_HEADERS, isConsolePath } from './console-headers.ts';
import { contextOf } from './context.ts';
import { HttpError, InternalError } from './errors.ts';
import { logRequest, logServerError, logUnexpectedError } from './log.ts';

/**
 * A JSON response (`application/json; charset=utf-8`, `Cache-Control: no-store`).
 *
 * @param body - serialized with `JSON.stringify`.
 * @param init - status and extra headers. @default status 200
 */
export function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set('Content-Type', 'application/json; charset=utf-8');
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store');
  return new Response(JSON.stringify(body), { ...init, headers });
}

/**
 * Renders an {@link HttpError} as the error body
 * `{ status: 'error', message, code, issues?, request_id }` (docs/gateway.md, "Error
 * body") with its status and headers.
 *
 * @param error - the error to render.
 * @param requestId - the request's id, repeated in the body.
 */
function errorResponse(error: HttpError, requestId: string): Response {
  return jsonResponse(
    {
      status: 'error',
      message: error.message,
      code: error.code,
      ...(error.issues === undefined ? {} : { issues: error.issues }),
      request_id: requestId,
    },
    { status: error.status, headers: error.headers },
  );
}

/**
 * The router's `catch` stage: renders typed errors; anything else is logged with its
 * stack and answered as a 500 `internal_error` (never a stack trace in the body). The
 * rendered code is kept on the context for the access log.
 *
 * @param error - what a stage threw.
 * @param request - the request being answered.
 */
export function renderError(error: unknown, request: IRequest): Response {
  const context = contextOf(request);
  const known = error instanceof HttpError ? error : undefined;
  if (known === undefined) logUnexpectedError(context, error);
  // The body says only "Internal error": the cause goes to the log, or nobody sees it.
  // A configuration error is logged where it is found (once per isolate, not per request).
  else if (known.status >= 500 && known.code !== 'configuration_error') {
    logServerError(context, known);
  }
  const rendered = known ?? new InternalError('unexpected error', { cause: error });
  context.errorCode = rendered.code;
  return errorResponse(rendered, context.requestId);
}

/**
 * The router's last `finally` stage: stamps `X-Request-Id`, `X-Content-Type-Options:
 * nosniff` and (when the response has none) `Cache-Control: no-store` on the response, the
 * console's security headers on an answer under `/console/`, and writes the access log line.
 *
 * @param response - the response so far (always a `Response` after itty's formatting).
 * @param request - the request being answered.
 * @returns a copy of `response` with mutable headers and the request id set.
 */
export function finalizeResponse(response: Response, request: IRequest): Response {
  const context = contextOf(request);
  // Copy: a Response from elsewhere may have immutable headers.
  const stamped = new Response(response.body, response);
  stamped.headers.set(REQUEST_ID_HEADER, context.requestId);
  // Every answer is for one caller: never stored by a browser or a shared cache (proxied
  // 2xx, cache hits and replays carry no Cache-Control of their own), never type-sniffed.
  if (!stamped.headers.has('Cache-Control')) stamped.headers.set('Cache-Control', 'no-store');
  stamped.headers.set('X-Content-Type-Options', 'nosniff');
  if (isConsolePath(new URL(request.url).pathname)) {
    for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) {
      stamped.headers.set(name, value);
    }
  }
  logRequest(context, request.method, stamped.status);
  return stamped;
}
