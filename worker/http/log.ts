import type { RequestContext } from './context.ts';

/** Severity of a log line. */
export type LogLevel = 'info' | 'warn' | 'error';

/**
 * Writes one structured JSON log line. Callers must never pass secrets, tokens,
 * signatures or full account numbers (DESIGN 4.1).
 *
 * @param level - severity; `error` goes to `console.error`.
 * @param event - stable snake_case event name.
 * @param fields - extra JSON-serializable fields.
 */
export function logEvent(level: LogLevel, event: string, fields: Record<string, unknown>): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === 'error') console.error(line);
  else console.log(line);
}

/**
 * The access log: one line per request with request id, caller name, method, route
 * name, status, upstream status, the gateway's own error code and latency in milliseconds.
 *
 * @param context - the request's context.
 * @param method - the request method.
 * @param status - the status answered.
 */
export function logRequest(context: RequestContext, method: string, status: number): void {
  logEvent(status >= 500 ? 'error' : 'info', 'request', {
    request_id: context.requestId,
    caller: context.caller ?? null,
    method,
    route: context.routeName ?? null,
    status,
    upstream_status: context.upstreamStatus ?? null,
    error_code: context.errorCode ?? null,
    latency_ms: Date.now() - context.startedAt,
  });
}

/**
 * Logs an error nobody expected (a bug or a runtime fault) with its stack, tied to
 * the request id; the caller only sees a 500 `internal_error` with the same id.
 *
 * @param context - the request's context.
 * @param error - what was thrown.
 */
export function logUnexpectedError(context: RequestContext, error: unknown): void {
  logEvent('error', 'unexpected_error', {
    request_id: context.requestId,
    route: context.routeName ?? null,
    error_name: error instanceof Error ? error.name : typeof error,
    error_message: error instanceof Error ? error.message : String(error),
    stack: error instanceof Error ? (error.stack ?? null) : null,
  });
}
