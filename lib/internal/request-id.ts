/**
 * The request id rule of the SDK, the sandbox and the gateway: one header, a caller's id
 * kept when it is safe to log and echo, otherwise a fresh UUID.
 */

/** Header carrying the request id: sent by the SDK, echoed on every sandbox and gateway answer, sent upstream. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * Longest caller-supplied request id that is kept, in characters.
 * @internal Exported for the test that sends ids at and over the limit.
 */
export const MAX_REQUEST_ID_LENGTH = 128;

// Visible ASCII only (no spaces or control characters: log and header injection), 1 to
// MAX_REQUEST_ID_LENGTH of them. A literal, so bundles that only send ids drop it.
const SANE_REQUEST_ID = /^[\x21-\x7E]{1,128}$/;

/**
 * A fresh request id, for a request that arrived without a usable one or that the SDK sends.
 *
 * @returns a random UUID (`crypto.randomUUID`).
 */
export function newRequestId(): string {
  return crypto.randomUUID();
}

/**
 * The request id of an incoming request: the caller's `X-Request-Id` when it is sane
 * (1 to 128 visible ASCII characters), otherwise a fresh UUID.
 *
 * @param headers - the incoming request headers.
 * @returns the id to log, send upstream and echo on the response.
 *
 * @example
 * ```ts
 * const requestId = resolveRequestId(request.headers);
 * response.headers.set(REQUEST_ID_HEADER, requestId);
 * ```
 */
export function resolveRequestId(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  return given !== null && SANE_REQUEST_ID.test(given) ? given : newRequestId();
}
