import type { Issue } from '../errors.ts';

/** One validation problem: a dot path into the request (`''` for the whole body) and a message. */
export type { Issue };

/**
 * An HTTP error a sandbox handler throws; rendered as the error body the gateway also
 * uses (`{ status: 'error', message, code, issues?, request_id }`, docs/gateway.md).
 */
export class SandboxHttpError extends Error {
  override name = 'SandboxHttpError';
  /** HTTP status code. */
  readonly status: number;
  /** Stable snake_case code, the same as the gateway's (docs/gateway.md, "Error codes"). */
  readonly code: string;
  /** Validation issues, for 400 `validation_failed`. */
  readonly issues: Issue[] | undefined;
  /** Extra response headers (e.g. `Allow` on a 405). */
  readonly headers: Record<string, string>;

  /**
   * @param status - HTTP status code.
   * @param code - stable error code.
   * @param message - human readable message.
   * @param extra - optional issues and response headers.
   */
  constructor(
    status: number,
    code: string,
    message: string,
    extra: { issues?: Issue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.issues = extra.issues;
    this.headers = extra.headers ?? {};
  }
}

/** 400 `validation_failed` listing every issue. */
export function validationError(issues: Issue[]): SandboxHttpError {
  const first = issues[0];
  const summary = first === undefined ? '' : `: ${first.path || 'body'}: ${first.message}`;
  return new SandboxHttpError(400, 'validation_failed', `Validation failed${summary}`, { issues });
}

/** 400 `validation_failed` with one issue on `path`. */
export function invalidField(path: string, message: string): SandboxHttpError {
  return validationError([{ path, message }]);
}

/** 404 `not_found` with `message` (e.g. "Payment not found"). */
export function notFoundError(message: string): SandboxHttpError {
  return new SandboxHttpError(404, 'not_found', message);
}

/** 409 `duplicate_reference` for a reused merchant reference. */
export function duplicateReference(what: string): SandboxHttpError {
  return new SandboxHttpError(409, 'duplicate_reference', `${what} already exists`);
}

/** 409 `insufficient_funds` "Insufficient funds" (docs/payments-api.md, "Errors"). */
export function insufficientFunds(): SandboxHttpError {
  return new SandboxHttpError(409, 'insufficient_funds', 'Insufficient funds');
}
