/** Header carrying the request id, on every response and on every upstream request (DESIGN 4.1). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Longest caller-supplied request id that is propagated, in characters. */
export const MAX_REQUEST_ID_LENGTH = 128;

// Visible ASCII only: no spaces or control characters (log and header injection).
const SANE_REQUEST_ID = new RegExp(`^[\\x21-\\x7E]{1,${MAX_REQUEST_ID_LENGTH}}$`);

/**
 * The request id of an incoming request: the caller's `X-Request-Id` when it is sane
 * (1 to 128 visible ASCII characters), otherwise a fresh UUID.
 *
 * @param headers - the incoming request headers.
 * @param generate - id source. @default crypto.randomUUID
 * @returns the id to log, send upstream and echo on the response.
 */
export function resolveRequestId(
  headers: Headers,
  generate: () => string = () => crypto.randomUUID(),
): string {
  const given = headers.get(REQUEST_ID_HEADER);
  return given !== null && SANE_REQUEST_ID.test(given) ? given : generate();
}
