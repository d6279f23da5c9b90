// Request authentication, checked as the service does (docs/payments-api.md, "Authentication").
import { SignatureVerificationError } from '../errors.ts';
import { timingSafeEqual } from '../internal/timing-safe-equal.ts';
import {
  KEY_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyRequestSignature,
} from '../signing.ts';
import { SandboxHttpError } from './http-error.ts';
import type { ResolvedSandboxOptions } from './options.ts';

/**
 * Accepted skew of `X-Timestamp` against the real clock, in seconds, past and future (the
 * spec names no window; docs/assumptions.md, "Authentication").
 */
const SIGNATURE_TOLERANCE_SEC = 300;

/**
 * Verifies `X-Key-Id`, `X-Timestamp` and `X-Signature` over the exact body bytes,
 * against the real clock (never the sandbox clock). Repeated signatures are accepted:
 * the scheme signs neither method nor path, so a legitimate retry in the same second
 * carries the same signature and must reach the duplicate-reference rule (409), not a 401.
 *
 * @param options - key id, secret and real clock.
 * @param headers - the request headers.
 * @param rawBody - the exact body bytes (empty for a body-less request).
 * @throws {SandboxHttpError} 401 `unauthorized` when a header is missing or the key id
 *   is unknown; 401 `invalid_signature` when the timestamp is malformed or stale or the
 *   signature does not match.
 */
export async function authenticate(
  options: ResolvedSandboxOptions,
  headers: Headers,
  rawBody: Uint8Array,
): Promise<void> {
  const keyId = headers.get(KEY_ID_HEADER);
  const missing = [KEY_ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER].filter(
    (name) => headers.get(name) === null,
  );
  if (missing.length > 0) {
    throw new SandboxHttpError(401, 'unauthorized', `Missing ${missing.join(', ')} header`);
  }
  if (keyId === null || !timingSafeEqual(keyId, options.keyId)) {
    throw new SandboxHttpError(401, 'unauthorized', 'Unknown key id');
  }
  try {
    await verifyRequestSignature({
      secret: options.secret,
      body: rawBody,
      headers,
      toleranceSec: SIGNATURE_TOLERANCE_SEC,
      now: options.now,
    });
  } catch (error) {
    if (error instanceof SignatureVerificationError) {
      throw new SandboxHttpError(401, 'invalid_signature', `Invalid signature: ${error.message}`);
    }
    throw error;
  }
}
