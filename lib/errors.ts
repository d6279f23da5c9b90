/**
 * Base class of every error edgepay throws (DESIGN 2). Subclasses set `name` and keep
 * the underlying `cause`.
 */
export class PaymentsError extends Error {
  override name = 'PaymentsError';
}

/** Why a signature was rejected. */
export type SignatureFailureReason =
  | 'missing_header'
  | 'malformed_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'malformed_signature'
  | 'signature_mismatch';

/**
 * A request or webhook signature did not verify (spec: Authentication): a header is
 * missing, the timestamp is outside the tolerance window, or the HMAC does not match
 * the exact bytes received.
 */
export class SignatureVerificationError extends PaymentsError {
  override name = 'SignatureVerificationError';
  /** Stable machine-readable reason. */
  readonly reason: SignatureFailureReason;

  /**
   * @param message - human readable, never containing the secret.
   * @param reason - stable reason code.
   */
  constructor(message: string, reason: SignatureFailureReason, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}
