// Response helpers: JSON bodies and the error body (the gateway's, docs/gateway.md).
import { BodyRejectedError } from '../internal/json-body.ts';
import { SandboxHttpError } from './http-error.ts';

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
 * Renders any thrown value as the error body `{ status: 'error', message, code,
 * issues?, request_id }`. A {@link BodyRejectedError} (a bad request body, refused by
 * lib's JSON body reader) keeps its status, code, message and issues. Anything that is
 * not a {@link SandboxHttpError} or one of those is logged and becomes 500 `internal_error`.
 *
 * @param error - what a handler threw.
 * @param requestId - the request id to report.
 * @returns the error response.
 */
export function apiErrorResponse(error: unknown, requestId: string): Response {
  const httpError =
    error instanceof SandboxHttpError
      ? error
      : error instanceof BodyRejectedError
        ? new SandboxHttpError(error.status, error.code, error.message, {
            ...(error.issues === undefined ? {} : { issues: error.issues }),
          })
        : new SandboxHttpError(500, 'internal_error', 'Internal error');
  if (httpError.status === 500 && !(error instanceof SandboxHttpError)) {
    console.error('sandbox: unexpected error', error);
  }
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
