import { redactPersonalData } from '../../lib/shared.ts';
import type { RequestContext } from './context.ts';
import { type HttpError, InternalError } from './errors.ts';

/** Severity of a log line. */
type LogLevel = 'info' | 'warn' | 'error';

/**
 * Writes one structured JSON log line. Callers must never pass secrets, tokens,
 * signatures, email addresses or full account numbers (logs reach more people and systems
 * than those values may); as a safety net, every top-level string field but `request_id`
 * goes through the SDK's `redactPersonalData` (emails become `[email]`, account numbers
 * keep their last 4 digits, the same rule as the SDK's error messages; the request id
 * is the caller's own, sent upstream and echoed as it is: masking it in the log would
 * only break the correlation).
 *
 * @param level - severity, and the console method that writes the line (`console.info`,
 *   `console.warn`, `console.error`), so log tooling sees the level without parsing.
 * @param event - stable snake_case event name.
 * @param fields - extra JSON-serializable fields.
 */
export function logEvent(level: LogLevel, event: string, fields: Record<string, unknown>): void {
  const masked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    masked[name] =
      typeof value === 'string' && name !== 'request_id' ? redactPersonalData(value) : value;
  }
  const line = JSON.stringify({ level, event, ...masked });
  console[level](line);
}

/**
 * The access log: one line per request with request id, caller name,
 * method, route name, status, upstream status, the gateway's own error code, the
 * idempotency outcome, the cache outcome (`null` where they do not apply) and latency
 * in milliseconds. Never a header, a body or a query string.
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
    idempotency: context.idempotency ?? null,
    cache: context.cache ?? null,
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

/**
 * Logs a 5xx the gateway answers on purpose (a missing setting, an unreachable or slow
 * upstream, a store that failed) with what its body leaves out: the `detail` of an
 * `InternalError` and the name and message of its `cause`. Never the stack of a known
 * fault, never a setting's value.
 *
 * @param context - the request's context (request id, route).
 * @param error - the error rendered as the response.
 */
export function logServerError(context: RequestContext, error: HttpError): void {
  const cause = error.cause;
  logEvent(error instanceof InternalError ? 'error' : 'warn', 'server_error', {
    request_id: context.requestId,
    route: context.routeName ?? null,
    status: error.status,
    error_code: error.code,
    detail: error instanceof InternalError ? error.detail : error.message,
    cause_name: cause instanceof Error ? cause.name : null,
    cause_message:
      cause instanceof Error ? cause.message : cause === undefined ? null : String(cause),
  });
}
