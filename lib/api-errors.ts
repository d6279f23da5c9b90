import { type ErrorContext, type Issue, RedactedError } from './errors.ts';
import { redactIssues } from './internal/redact.ts';
import { REQUEST_ID_HEADER } from './internal/request-id.ts';

/** Context of an {@link APIError}: a response always arrived. */
export interface APIErrorContext extends ErrorContext {
  status: number;
  /** Stable error code from the body (`insufficient_funds`), when the body has one. */
  code?: string | undefined;
  /** Per-field problems from the body, when it lists them. */
  issues?: Issue[] | undefined;
}

/**
 * The service answered with an error status. Subclasses exist per status, for the spec's
 * four known 409s and for a taken reference; `status`, `code`, `issues`, `headers`,
 * `requestId` and `rawBody` come from the response. Email addresses and account numbers
 * are masked in the message, the URL and the issues' messages; `rawBody` keeps them (it is
 * the body unredacted, and not enumerable).
 */
export class APIError extends RedactedError {
  override name = 'APIError';
  /** HTTP status of the response (400..599). */
  declare readonly status: number;
  /** Stable error code from the body, when given. */
  readonly code: string | undefined;
  /** Per-field problems from the body, when listed; personal data in the messages is masked. */
  readonly issues: Issue[];

  /**
   * @param message - names the status, method and URL, then the service's message;
   *   personal data in it is masked.
   */
  constructor(message: string, context: APIErrorContext) {
    super(message, context);
    this.code = context.code;
    this.issues = redactIssues(context.issues ?? []);
  }
}

/** 400: the service rejected the request as malformed. */
export class BadRequestError extends APIError {
  override name = 'BadRequestError';
}
/** 401: missing or wrong credentials or signature (docs/payments-api.md, "Authentication"). */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}
/** 403: the credentials may not do this. */
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
}
/** 404: no such reference or route. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}
/** 409: the request conflicts with the current state (duplicate reference...). */
export class ConflictError extends APIError {
  override name = 'ConflictError';
}
/** 422: well-formed but refused by a business rule (refund above the payment...). */
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
}
/** 429: too many requests; `headers` may carry `Retry-After`. */
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
}
/** 5xx: the service failed. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}

/** 409 "Mandate is not active or authorized" (docs/payments-api.md, "Errors"). */
export class MandateNotActiveError extends ConflictError {
  override name = 'MandateNotActiveError';
}
/** 409 "Mandate activation needs to be initiated first" (docs/payments-api.md, "Errors"). */
export class ActivationNotInitiatedError extends ConflictError {
  override name = 'ActivationNotInitiatedError';
}
/** 409 "Insufficient funds" (docs/payments-api.md, "Errors"). */
export class InsufficientFundsError extends ConflictError {
  override name = 'InsufficientFundsError';
}
/**
 * 409: a creation was refused because its merchant reference is already taken (code
 * `duplicate_reference`; the spec gives this refusal no message of its own). The record
 * may be this request's own: after an ambiguous failure the SDK looks it up instead of
 * throwing this.
 */
export class DuplicateReferenceError extends ConflictError {
  override name = 'DuplicateReferenceError';
}
/** 409 "Refund already exists" (docs/payments-api.md, "Errors"): the `refund_reference` is taken. */
export class DuplicateRefundError extends DuplicateReferenceError {
  override name = 'DuplicateRefundError';
}

type APIErrorClass = new (message: string, context: APIErrorContext) => APIError;

// The API gives these 409s a message but no code: match the message, or our code (a
// taken reference has no message in the API, only our code; docs/payments-api.md, "Errors").
const KNOWN_CONFLICTS: { message?: string; code: string; type: APIErrorClass }[] = [
  {
    message: 'mandate is not active or authorized',
    code: 'mandate_not_active',
    type: MandateNotActiveError,
  },
  {
    message: 'mandate activation needs to be initiated first',
    code: 'activation_not_initiated',
    type: ActivationNotInitiatedError,
  },
  { message: 'insufficient funds', code: 'insufficient_funds', type: InsufficientFundsError },
  { message: 'refund already exists', code: 'refund_already_exists', type: DuplicateRefundError },
  { code: 'duplicate_reference', type: DuplicateReferenceError },
];

const BY_STATUS: Record<number, APIErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** What {@link createAPIError} needs of a failed exchange. */
export interface FailedResponse {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  rawBody: string;
}

/**
 * Builds the most specific {@link APIError} for an error response: by status, and for
 * 409 by the spec's known messages (or our stable codes).
 *
 * @returns an APIError subclass whose message is
 *   `Request failed with status 409: POST https://... (Insufficient funds)`, with email
 *   addresses and account numbers masked (`[email]`, `******6789`); `rawBody` keeps them.
 */
export function createAPIError(response: FailedResponse): APIError {
  const body = parseErrorBody(response.rawBody);
  const apiMessage = body.message ?? '';
  let type =
    response.status >= 500 ? InternalServerError : (BY_STATUS[response.status] ?? APIError);
  if (response.status === 409) {
    const lower = apiMessage.trim().toLowerCase();
    const known = KNOWN_CONFLICTS.find(
      (entry) => entry.message === lower || entry.code === body.code,
    );
    if (known !== undefined) type = known.type;
  }
  const suffix = apiMessage === '' ? '' : ` (${apiMessage})`;
  const requestId = response.headers.get(REQUEST_ID_HEADER) ?? body.requestId;
  return new type(
    `Request failed with status ${response.status}: ${response.method} ${response.url}${suffix}`,
    {
      method: response.method,
      url: response.url,
      status: response.status,
      headers: response.headers,
      rawBody: response.rawBody,
      requestId,
      code: body.code,
      issues: body.issues,
    },
  );
}

interface ErrorBody {
  message?: string | undefined;
  code?: string | undefined;
  issues?: Issue[] | undefined;
  requestId?: string | undefined;
}

// The error body of the gateway and the sandbox (`{ status, message, code, issues?,
// request_id }`, docs/gateway.md) when it is one; anything else (HTML from a proxy...) reads as {}.
function parseErrorBody(rawBody: string): ErrorBody {
  let body: Record<string, unknown>;
  try {
    body = Object(JSON.parse(rawBody));
  } catch {
    return {};
  }
  return {
    message: text(body.message),
    code: text(body.code),
    requestId: text(body.request_id),
    issues: Array.isArray(body.issues)
      ? body.issues
          .map((issue) => Object(issue))
          .filter((issue) => typeof issue.message === 'string')
          .map((issue) => ({ path: text(issue.path) ?? '', message: issue.message }))
      : undefined,
  };
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
