import { redactIssues, redactPersonalData } from './internal/redact.ts';

/** What an error knows of the HTTP exchange it came from (all optional: some errors happen before any). */
export interface ErrorContext {
  /** HTTP method of the request, e.g. `POST`. */
  method?: string;
  /** Full URL of the request. */
  url?: string;
  /** HTTP status of the response, when one arrived. */
  status?: number;
  /** Response headers, when a response arrived. */
  headers?: Headers;
  /** `X-Request-Id` of the response (or of the request when no response arrived). */
  requestId?: string | undefined;
  /**
   * The response body exactly as received, when one arrived: unredacted, so it may hold
   * personal data (names, emails, account numbers).
   */
  rawBody?: string;
  /** The underlying error (a fetch rejection, an abort reason, a valibot failure...). */
  cause?: unknown;
}

/** One problem found in a request or response body: a dot path (`data.amount`) and a message. */
export interface Issue {
  /** Dot path of the field (`data.amount`, `customer_email`); `''` for the body as a whole. */
  path: string;
  /** What is wrong with it, in words. */
  message: string;
}

/**
 * Base class of every error edgepay throws, so one `instanceof` catches them all.
 * Carries what is known of the HTTP exchange: method, URL, status, headers, request id,
 * raw body and `cause`.
 */
export class PaymentsError extends Error {
  /** The class's own name (`'TimeoutError'`, `'NotFoundError'`...), as logs print it. */
  override name = 'PaymentsError';
  /** HTTP method of the call (`POST`), when the error belongs to one. */
  declare readonly method: string | undefined;
  /** Full URL of the call, query included, when the error belongs to one. */
  declare readonly url: string | undefined;
  /** HTTP status of the response, when one arrived. */
  declare readonly status: number | undefined;
  /** Headers of the response (`Retry-After`, `X-Request-Id`...), when one arrived. */
  declare readonly headers: Headers | undefined;
  /** The response's `X-Request-Id`, else the one the SDK sent: quote it to support. */
  declare readonly requestId: string | undefined;
  /**
   * The response's body exactly as received, when one arrived. Unlike the message, the URL
   * and the issues, it is NOT redacted: it may hold personal data (names, emails, account
   * numbers), so never log it whole. It is not enumerable, so serializing the error
   * (`JSON.stringify`, `console.log`, a structured logger) leaves it out; read it by name.
   */
  declare readonly rawBody: string | undefined;

  /**
   * @param message - human readable; never contains a secret.
   * @param context - the HTTP exchange and the `cause`.
   */
  constructor(message: string, context: ErrorContext = {}) {
    // Error takes `cause` from the context (only when it has one); the exchange is copied on.
    super(message, context);
    Object.assign(this, context);
  }
}

/**
 * A {@link PaymentsError} that may describe a call or a body, and so may quote personal data:
 * email addresses and account numbers in its message, URL and issues are masked
 * (`[email]`, `******6789`; docs/assumptions.md), and its `rawBody`, the one field kept as
 * received, is not enumerable. Every error of the SDK but a signature failure is one.
 * Signature failures quote nothing received (and stay small for `verifyRequestSignature`).
 */
export class RedactedError extends PaymentsError {
  /**
   * @param message - human readable; personal data in it is masked.
   * @param context - the HTTP exchange and the `cause`; `url` is masked like the message.
   */
  constructor(message: string, context: ErrorContext = {}) {
    const { url, rawBody } = context;
    super(
      redactPersonalData(message),
      url === undefined ? context : { ...context, url: redactPersonalData(url) },
    );
    if (rawBody !== undefined) Object.defineProperty(this, 'rawBody', { enumerable: false });
  }
}

/** Why a signature was rejected. */
export type SignatureFailureReason =
  | 'missing_header'
  | 'malformed_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'malformed_signature'
  | 'signature_mismatch';

/**
 * A request or webhook signature did not verify (docs/payments-api.md, "Authentication"): a header is
 * missing, the timestamp is outside the tolerance window, or the HMAC does not match
 * the exact bytes received.
 */
export class SignatureVerificationError extends PaymentsError {
  override name = 'SignatureVerificationError';
  /** Stable machine-readable reason. */
  declare readonly reason: SignatureFailureReason;

  /**
   * @param message - human readable, never containing the secret.
   * @param reason - stable reason code.
   * @param context - the HTTP exchange, when there is one, and the `cause`.
   */
  constructor(message: string, reason: SignatureFailureReason, context: ErrorContext = {}) {
    super(message, context);
    this.reason = reason;
  }
}

/** The request never got an answer: DNS, refused or reset connection, TLS. */
export class ConnectionError extends RedactedError {
  override name = 'ConnectionError';
}

/** No complete answer arrived within the timeout (headers and body). */
export class TimeoutError extends RedactedError {
  override name = 'TimeoutError';
  /** The timeout that ran out, in milliseconds. */
  readonly timeoutMs: number;

  /**
   * @param message - names the method and URL.
   * @param timeoutMs - the timeout that elapsed, in milliseconds.
   */
  constructor(message: string, timeoutMs: number, context: ErrorContext = {}) {
    super(message, context);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A money request may or may not have been carried out, and the SDK could not tell: it
 * was resent after an ambiguous failure, the service refused the resend because its
 * merchant reference exists, and the record could still not be read through the settle
 * window (`settleMs`). The reference is taken: look it up later (e.g.
 * `transfers.verify(reference)`) before doing anything else, and never send the same
 * money again under a new reference until it has been. `cause` is the refusal.
 */
export class OutcomeUnknownError extends RedactedError {
  override name = 'OutcomeUnknownError';
  /** The merchant reference whose outcome is unknown. */
  readonly reference: string;

  /**
   * @param message - names the method, URL and reference.
   * @param reference - the merchant reference of the request.
   * @param context - the HTTP exchange; `cause` is the duplicate-reference refusal.
   */
  constructor(message: string, reference: string, context: ErrorContext = {}) {
    super(message, context);
    this.reference = reference;
  }
}

/** The caller's `AbortSignal` aborted the request; `cause` is the abort reason. */
export class AbortError extends RedactedError {
  override name = 'AbortError';
}

/** An error that lists every problem it found, each with a dot path. */
class IssuesError extends RedactedError {
  /** Every problem found, each with a dot path; personal data in the messages is masked. */
  readonly issues: Issue[];

  /**
   * @param message - names the method (and URL) and what was wrong.
   * @param issues - every problem, each with a dot path into the input or body.
   */
  constructor(message: string, issues: Issue[], context: ErrorContext = {}) {
    super(message, context);
    this.issues = redactIssues(issues);
  }
}

/** Bad input caught before any network call; `issues` lists every problem with its path. */
export class RequestValidationError extends IssuesError {
  override name = 'RequestValidationError';
}

/** A response did not have the shape the spec describes; `rawBody` holds what came. */
export class ResponseValidationError extends IssuesError {
  override name = 'ResponseValidationError';
}
