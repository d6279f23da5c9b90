// Response helpers: JSON bodies, the error body of DESIGN 4.4, request ids.
import { SandboxHttpError } from './http-error.ts';

/** Header carrying the request id, echoed on every response (DESIGN 4.1). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * A JSON response (`Content-Type: application/json`).
 *
 * @param body - serialized with JSON.stringify.
 * @param status - HTTP status. @default 200
 * @param headers - extra headers.
 */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/**
 * The request id to answer with: the incoming `X-Request-Id` when it is 1 to 200
 * visible ASCII characters, else a generated `req_<uuid>`.
 *
 * @param headers - the request headers.
 */
export function readRequestId(headers: Headers): string {
  const incoming = headers.get(REQUEST_ID_HEADER);
  if (incoming !== null && /^[\x21-\x7e]{1,200}$/.test(incoming)) return incoming;
  return `req_${crypto.randomUUID()}`;
}

/**
 * Renders any thrown value as the error body `{ status: 'error', message, code,
 * issues?, request_id }` (DESIGN 4.4). Anything that is not a {@link SandboxHttpError}
 * is logged and becomes 500 `internal_error`.
 *
 * @param error - what a handler threw.
 * @param requestId - the request id to report.
 */
export function errorResponse(error: unknown, requestId: string): Response {
  const httpError =
    error instanceof SandboxHttpError
      ? error
      : new SandboxHttpError(500, 'internal_error', 'Internal error');
  if (!(error instanceof SandboxHttpError)) console.error('sandbox: unexpected error', error);
  const body: Record<string, unknown> = {
    status: 'error',
    message: httpError.message,
    code: httpError.code,
  };
  if (httpError.issues !== undefined) body.issues = httpError.issues;
  body.request_id = requestId;
  return json(body, httpError.status, httpError.headers);
}

/**
 * Formats sandbox epoch milliseconds as ISO 8601 UTC.
 *
 * @param ms - epoch milliseconds.
 */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
