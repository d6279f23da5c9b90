import { SignatureVerificationError } from './errors.ts';
import { bytesToHex, hexToBytes } from './internal/hex.ts';
import { requireSecret } from './internal/secret.ts';

/** Header carrying the merchant key identifier (docs/payments-api.md, "Authentication"). */
export const KEY_ID_HEADER = 'X-Key-Id';
/** Header carrying the signing time, unix seconds (docs/payments-api.md, "Authentication"). */
export const TIMESTAMP_HEADER = 'X-Timestamp';
/** Header carrying the lowercase hex HMAC-SHA256 of `${timestamp}:${rawBody}` (docs/payments-api.md, "Authentication"). */
export const SIGNATURE_HEADER = 'X-Signature';

/** Default freshness window, in seconds, applied both to the past and to the future. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** The three headers that authenticate a request (docs/payments-api.md, "Authentication"). */
export interface SignatureHeaders {
  /** The merchant key identifier the secret belongs to. */
  'X-Key-Id': string;
  /** Unix time in seconds, as decimal digits. */
  'X-Timestamp': string;
  /** Lowercase hex HMAC-SHA256 of `${timestamp}:${rawBody}` (64 characters). */
  'X-Signature': string;
}

/** A request body exactly as sent on the wire: text (encoded as UTF-8) or bytes. */
export type RawBody = string | Uint8Array;

/** Options of {@link signRequest}. */
export interface SignRequestOptions {
  /** The merchant key identifier, sent as `X-Key-Id`. */
  keyId: string;
  /** The API secret; HMAC key, never sent. Required: missing or empty is a `TypeError`. */
  secret: string;
  /** The exact bytes that will be sent; `''` (the default) for a request without a body. */
  body?: RawBody;
  /** Unix time in seconds to sign with. @default the current time from `now` */
  timestamp?: number;
  /** Clock in milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /**
   * SubtleCrypto implementation, typed through the global `crypto` because Node's types
   * declare no global `SubtleCrypto`. @default globalThis.crypto.subtle
   */
  subtle?: typeof crypto.subtle;
}

/** Options of {@link verifyRequestSignature}. */
export interface VerifyRequestSignatureOptions {
  /**
   * The API secret the signature must have been made with. Required: missing (`undefined`,
   * `null`) or empty is a `TypeError`, never a pass.
   */
  secret: string;
  /** The exact bytes received; `''` for a request without a body. */
  body: RawBody;
  /** The received headers (a `Headers` or a plain record; names are case-insensitive). */
  headers: Headers | Record<string, string | undefined>;
  /** Accepted clock skew in seconds, both to the past and to the future. @default 300 */
  toleranceSec?: number;
  /** Clock in milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** SubtleCrypto implementation. @default globalThis.crypto.subtle */
  subtle?: typeof crypto.subtle;
}

const encoder = new TextEncoder();
const MAX_CACHED_KEYS = 64;
const keyCache = new WeakMap<SubtleCrypto, Map<string, Promise<CryptoKey>>>();

/**
 * Signs a request (docs/payments-api.md, "Authentication"): HMAC-SHA256 keyed with the
 * secret over `${timestamp}:${rawBody}`, lowercase hex. A body-less request signs
 * `${timestamp}:` (an assumption, see docs/assumptions.md). The CryptoKey is imported
 * once per secret and reused.
 *
 * @param options - key id, secret, exact body, and optional timestamp (seconds), clock and SubtleCrypto.
 * @returns the `X-Key-Id`, `X-Timestamp` (unix seconds) and `X-Signature` headers.
 * @throws {TypeError} naming `secret` when it is missing or empty; when no SubtleCrypto
 *   is available (pass `subtle`).
 *
 * @example
 * ```ts
 * const body = JSON.stringify({ reference: 'tr_1', amount: 5000 });
 * const headers = await signRequest({ keyId: 'key', secret: 'secret', body });
 * await fetch(url, { method: 'POST', body, headers: { ...headers, 'Content-Type': 'application/json' } });
 * ```
 */
export async function signRequest(options: SignRequestOptions): Promise<SignatureHeaders> {
  const secret = requireSecret(options.secret);
  const subtle = resolveSubtle(options.subtle);
  const timestamp = String(options.timestamp ?? unixSeconds(options.now ?? Date.now));
  const key = await importHmacKey(subtle, secret);
  const mac = await subtle.sign('HMAC', key, signedPayload(timestamp, options.body ?? ''));
  return {
    [KEY_ID_HEADER]: options.keyId,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: bytesToHex(new Uint8Array(mac)),
  };
}

/**
 * Verifies the signature headers of a received request (docs/payments-api.md, "Authentication"): the
 * timestamp must be unix seconds within `toleranceSec` of now (past or future), and the
 * signature must be the HMAC of `${timestamp}:${rawBody}`. The comparison is constant
 * time (`SubtleCrypto.verify`). Repeated signatures are not rejected: the scheme signs
 * neither method nor path and the timestamp has one-second resolution, so two legitimate
 * requests with the same body in the same second carry the same signature
 * (docs/assumptions.md, "Authentication").
 *
 * @param options - secret, exact body, received headers, tolerance (seconds), clock, SubtleCrypto.
 * @returns nothing when the signature is valid.
 * @throws {TypeError} naming `secret` when it is missing or empty (fails closed: a lost
 *   secret never lets a request through unchecked); when no SubtleCrypto is available.
 * @throws {SignatureVerificationError} with `reason` `missing_header`, `malformed_timestamp`,
 *   `timestamp_out_of_tolerance`, `malformed_signature` or `signature_mismatch`.
 */
export async function verifyRequestSignature(
  options: VerifyRequestSignatureOptions,
): Promise<void> {
  const secret = requireSecret(options.secret);
  const subtle = resolveSubtle(options.subtle);
  const timestamp = readHeader(options.headers, TIMESTAMP_HEADER);
  const signature = readHeader(options.headers, SIGNATURE_HEADER);
  if (timestamp === undefined || signature === undefined) {
    throw new SignatureVerificationError(
      `Missing ${timestamp === undefined ? TIMESTAMP_HEADER : SIGNATURE_HEADER} header`,
      'missing_header',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new SignatureVerificationError(
      `${TIMESTAMP_HEADER} must be unix seconds`,
      'malformed_timestamp',
    );
  }
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const skew = Math.abs(unixSeconds(options.now ?? Date.now) - Number(timestamp));
  if (skew > toleranceSec) {
    throw new SignatureVerificationError(
      `${TIMESTAMP_HEADER} is ${skew} s away from now (tolerance ${toleranceSec} s)`,
      'timestamp_out_of_tolerance',
    );
  }
  if (!/^[0-9a-f]{64}$/i.test(signature)) {
    throw new SignatureVerificationError(
      `${SIGNATURE_HEADER} must be 64 hex characters`,
      'malformed_signature',
    );
  }
  const key = await importHmacKey(subtle, secret);
  const mac = hexToBytes(signature);
  const valid = await subtle.verify('HMAC', key, mac, signedPayload(timestamp, options.body));
  if (!valid) {
    throw new SignatureVerificationError(
      `${SIGNATURE_HEADER} does not match the body and timestamp`,
      'signature_mismatch',
    );
  }
}

/**
 * Imports (once per SubtleCrypto and secret) the HMAC-SHA256 key for `secret`.
 * Internal to edgepay: used only by {@link signRequest} and {@link verifyRequestSignature}
 * in this file (the gateway and the sandbox call those), and not re-exported from the
 * package entry point.
 */
function importHmacKey(subtle: SubtleCrypto, secret: string): Promise<CryptoKey> {
  const keys = keyCache.get(subtle) ?? new Map<string, Promise<CryptoKey>>();
  keyCache.set(subtle, keys);
  let key = keys.get(secret);
  if (key === undefined) {
    if (keys.size >= MAX_CACHED_KEYS) keys.clear();
    key = subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    );
    keys.set(secret, key);
    // A failed import must not poison the cache.
    key.catch(() => keys.delete(secret));
  }
  return key;
}

function signedPayload(timestamp: string, body: RawBody): Uint8Array<ArrayBuffer> {
  // Workers' types widen encode()'s buffer to ArrayBufferLike; it is always an ArrayBuffer.
  if (typeof body === 'string')
    return encoder.encode(`${timestamp}:${body}`) as Uint8Array<ArrayBuffer>;
  const prefix = encoder.encode(`${timestamp}:`);
  const payload = new Uint8Array(prefix.length + body.length);
  payload.set(prefix);
  payload.set(body, prefix.length);
  return payload;
}

function readHeader(
  headers: Headers | Record<string, string | undefined>,
  name: string,
): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

function resolveSubtle(subtle: SubtleCrypto | undefined): SubtleCrypto {
  const resolved = subtle ?? (typeof crypto === 'undefined' ? undefined : crypto.subtle);
  if (resolved === undefined) {
    throw new TypeError('No Web Crypto here: pass `subtle`');
  }
  return resolved;
}

function unixSeconds(now: () => number): number {
  return Math.floor(now() / 1000);
}
