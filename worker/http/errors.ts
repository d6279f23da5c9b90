/**
 * Stable error codes of the gateway (listed with their statuses in docs/gateway.md,
 * "Error codes"): clients branch on them, never on messages. The spec's known errors
 * keep the spec's messages; upstream errors pass through with the upstream's own code.
 */
export type ErrorCode =
  | 'unauthorized'
  | 'invalid_signature'
  | 'forbidden'
  | 'validation_failed'
  | 'not_found'
  | 'method_not_allowed'
  | 'duplicate_reference'
  | 'mandate_not_active'
  | 'activation_not_initiated'
  | 'insufficient_funds'
  | 'refund_already_exists'
  | 'refund_exceeds_payment'
  | 'monthly_limit_exceeded'
  | 'mandate_not_started'
  | 'mandate_expired'
  | 'idempotency_key_missing'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_flight'
  | 'idempotency_record_mismatch'
  | 'idempotency_answer_lost'
  | 'event_unconfirmed'
  | 'subscription_disabled'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'configuration_error'
  | 'internal_error';

/** One problem with a request field, an entry of the error body's `issues`. */
export interface ErrorIssue {
  /** Dotted path of the field, e.g. `amount` or `metadata.order_id`. */
  path: string;
  message: string;
}

/** Options of {@link HttpError}. */
interface HttpErrorOptions extends ErrorOptions {
  /** Field problems, rendered as `issues` in the body. */
  issues?: readonly ErrorIssue[];
  /** Extra response headers, e.g. `WWW-Authenticate`, `Allow`, `Retry-After`. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * An error the gateway answers on purpose: handlers throw it, the router's `catch`
 * stage renders it as the error body `{ status: 'error', message, code, issues?,
 * request_id }` with its status and headers.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  /** HTTP status code of the response. */
  readonly status: number;
  /** Stable snake_case code. */
  readonly code: ErrorCode;
  /** Field problems, when the request was invalid. */
  readonly issues: readonly ErrorIssue[] | undefined;
  /** Extra response headers. */
  readonly headers: Readonly<Record<string, string>>;

  /**
   * @param status - HTTP status code.
   * @param code - stable error code.
   * @param message - human readable; never a secret, token or stack trace.
   * @param options - issues, extra headers and `cause`.
   */
  constructor(status: number, code: ErrorCode, message: string, options: HttpErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.issues = options.issues;
    this.headers = options.headers ?? {};
  }
}

/** 401 `unauthorized`: the bearer token is missing, malformed or unknown. */
export class UnauthorizedError extends HttpError {
  override name = 'UnauthorizedError';

  /** @param message - why the caller was not authenticated, without echoing the token. */
  constructor(message: string) {
    super(401, 'unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
}

/** 404 `not_found`: no route matches the path. */
export class RouteNotFoundError extends HttpError {
  override name = 'RouteNotFoundError';

  /** @param method - request method. @param path - request path, as received. */
  constructor(method: string, path: string) {
    super(404, 'not_found', `No route for ${method} ${path}`);
  }
}

/** 405 `method_not_allowed`: the path is known but not with this method; sets `Allow`. */
export class MethodNotAllowedError extends HttpError {
  override name = 'MethodNotAllowedError';

  /**
   * @param method - request method.
   * @param allowed - the methods the path answers to, listed in `Allow`.
   */
  constructor(method: string, allowed: readonly string[]) {
    super(405, 'method_not_allowed', `Method ${method} is not allowed here`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
}

/** 504 `upstream_timeout`: the upstream did not answer (body included) in time. */
export class UpstreamTimeoutError extends HttpError {
  override name = 'UpstreamTimeoutError';

  /** @param timeoutMs - the limit that was exceeded, in milliseconds. */
  constructor(timeoutMs: number, options: ErrorOptions = {}) {
    super(504, 'upstream_timeout', `The payment service did not answer within ${timeoutMs} ms`, {
      ...options,
    });
  }
}

/** 502 `upstream_unreachable`: the connection to the upstream failed. */
export class UpstreamUnreachableError extends HttpError {
  override name = 'UpstreamUnreachableError';

  /** @param options - `cause`: the network error (logged, never rendered). */
  constructor(options: ErrorOptions = {}) {
    super(502, 'upstream_unreachable', 'The payment service could not be reached', {
      ...options,
    });
  }
}

/**
 * 500 `internal_error` for a known server-side fault (e.g. a malformed setting). The
 * body says only "Internal error"; `detail` is for the logs.
 */
export class InternalError extends HttpError {
  override name = 'InternalError';
  /** What went wrong, for the logs only (never a secret). */
  readonly detail: string;

  /** @param detail - log-only description. */
  constructor(detail: string, options: ErrorOptions = {}) {
    super(500, 'internal_error', 'Internal error', { ...options });
    this.detail = detail;
  }
}
