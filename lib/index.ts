// edgepay: the SDK for the payments API (DESIGN 2).

// Errors
export {
  PaymentsError,
  type SignatureFailureReason,
  SignatureVerificationError,
} from './errors.ts';
// Request signing (spec: Authentication)
export {
  DEFAULT_TOLERANCE_SEC,
  KEY_ID_HEADER,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeaders,
  type SignRequestOptions,
  signRequest,
  TIMESTAMP_HEADER,
  type VerifyRequestSignatureOptions,
  verifyRequestSignature,
} from './signing.ts';
