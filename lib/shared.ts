// edgepay/shared: the one module besides the public API (`lib/index.ts`) that the gateway
// Worker may import from lib/. It holds the pieces the SDK, the sandbox and the gateway
// must agree on byte for byte (the endpoint table's helpers, reading a JSON request body,
// Retry-After, request ids), so each rule is written once. It is not a package entry
// point: users of the SDK never need it.

// Comparing secrets and encoding digests (the gateway's token checks and request fingerprints).
export {
  /** `bytesToHex(bytes)`: lowercase hex of a byte array, two characters per byte. */
  bytesToHex,
} from './internal/hex.ts';
// Reading a JSON request body (gateway proxy, webhook ingress, admin API; the sandbox too).
export {
  /**
   * A body refused by the readers here: `status` 413 / 415 / 400, `code`
   * `payload_too_large` / `unsupported_media_type` / `validation_failed`, `message`, and
   * `issues` (`{ path, message }`, dot paths) with a 400. The gateway and the sandbox
   * each render it as their own error body.
   */
  BodyRejectedError,
  /**
   * `checkBodySize(headers, byteLength, limit)`: refuses a declared `Content-Length` or a
   * byte count over `limit` bytes.
   * @throws {BodyRejectedError} 413 `payload_too_large` "Request body exceeds <limit> bytes".
   */
  checkBodySize,
  /** Largest request body accepted when nothing else is configured: 65,536 bytes (64 KiB). */
  DEFAULT_MAX_BODY_BYTES,
  /**
   * `parseJsonBody(bytes, contentType, schema)`: in this order, non-empty (400), a JSON
   * media type with no charset but UTF-8 (415), strict UTF-8 without a byte order mark,
   * valid JSON, an object, no key repeated (400 at the key's dot path), then the valibot
   * schema (400 listing every issue).
   * @returns `{ bytes, text, value }`.
   * @throws {BodyRejectedError} 415 or 400.
   */
  parseJsonBody,
  /**
   * `readBody(request, limit = 65536)`: the exact bytes of a body of at most `limit`
   * bytes; a declared length over it is refused before reading, a longer stream as soon
   * as it passes the limit.
   * @returns `Promise<Uint8Array>`.
   * @throws {BodyRejectedError} 413.
   */
  readBody,
  /**
   * `readCapped(request, limit)`: reads a body up to one chunk past `limit` bytes, never
   * buffering an oversized upload whole; refuses nothing (see `checkBodySize`).
   * @returns `Promise<Uint8Array>`, more than `limit` bytes when the body is larger.
   */
  readCapped,
  /**
   * `readJsonBody(request, schema, limit = 65536)`: `readBody` then `parseJsonBody`.
   * @returns `Promise<{ bytes, text, value }>`.
   * @throws {BodyRejectedError} 413, 415 or 400.
   */
  readJsonBody,
  /**
   * `requestIssues(issues)`: valibot issues as `{ path, message }` with dot paths, a
   * missing key reading "Required" and an unknown key of a strict object "Unknown field".
   * @returns one issue per valibot issue, in order.
   */
  requestIssues,
} from './internal/json-body.ts';
// Request ids (the SDK, the sandbox and the gateway).
export {
  /** `X-Request-Id`: sent by the SDK, echoed on every sandbox and gateway answer, sent upstream. */
  REQUEST_ID_HEADER,
  /**
   * `resolveRequestId(headers)`: the caller's `X-Request-Id` when it is 1 to 128 visible
   * ASCII characters, else a fresh UUID.
   * @returns the id to log, echo and send upstream.
   */
  resolveRequestId,
} from './internal/request-id.ts';
// Retry-After (the SDK's retries, the relay's delivery schedule).
export {
  /**
   * `parseRetryAfter(value, nowMs)`: delay-seconds or an HTTP-date in any of the three
   * forms of RFC 9110 (IMF-fixdate, rfc850, asctime; all GMT).
   * @param value - the header value, `null` / `undefined` when absent.
   * @param nowMs - the current time, epoch milliseconds.
   * @returns whole seconds to wait (0 for a past date), `undefined` when absent or unreadable.
   */
  parseRetryAfter,
} from './internal/retry-after.ts';
export {
  /**
   * `timingSafeEqual(a, b)`: whether two strings are equal, in time that depends only on
   * their lengths, never on where they differ (tokens and secrets are compared with it).
   */
  timingSafeEqual,
} from './internal/timing-safe-equal.ts';
// Aborting a wait (the SDK's transport and retry delays, the gateway's upstream calls).
export {
  /**
   * `untilAborted(promise, signal, aborted?)`: settles as `promise` does, but rejects with
   * `aborted()` (default: the signal's reason) as soon as `signal` aborts, even when
   * `promise` never settles (a stalled fetch or body read).
   * @throws what `promise` rejects with, or the abort rejection.
   */
  untilAborted,
} from './internal/until-aborted.ts';
// The request schemas' building blocks, which the gateway's OpenAPI document describes by
// the same rules (decimal amounts, references, dates).
export {
  /** Decimal amount text in major units: at most 13 whole digits and 2 decimals. */
  DECIMAL_AMOUNT,
  /** The largest amount accepted, in minor units. */
  MAX_AMOUNT_MINOR,
  /** Minor units in one major unit (100). */
  MINOR_PER_MAJOR,
  /** Decimal places of a major-unit amount (2). */
  MINOR_UNIT_DIGITS,
} from './money.ts';
export {
  /** An account number: 6 to 20 digits. */
  AccountNumberSchema,
  /** A positive amount in major units, a number or a decimal string, at most 2 decimals. */
  AmountSchema,
  /** A bank code: 3 to 6 digits. */
  BankCodeSchema,
  /** An ISO 4217 currency code in capitals, e.g. `NGN`. */
  CurrencySchema,
  /** A calendar date, `YYYY-MM-DD`. */
  DateSchema,
  /** An ISO 8601 date or date-time, as the list filters take it. */
  DateTimeSchema,
  /** An email address, at most 254 characters. */
  EmailSchema,
  /** An absolute http(s) URL, at most 2048 characters. */
  HttpUrlSchema,
  /** A JSON object of metadata, returned unchanged. */
  MetadataSchema,
  /** The `page` query parameter: a whole number from 1, default 1. */
  PageQuerySchema,
  /** The `page_size` query parameter: a whole number from 1 to 100, default 10. */
  PageSizeQuerySchema,
  /** A merchant reference: 1 to 100 visible ASCII characters, never `.` or `..`. */
  ReferenceSchema,
} from './schemas/common.ts';
export {
  /** The ISO 8601 date or date-time forms the list filters accept (a regular expression). */
  DATE_TIME,
} from './schemas/dates.ts';
