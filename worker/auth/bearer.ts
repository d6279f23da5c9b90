import { UnauthorizedError } from '../http/errors.ts';

/**
 * `Authorization: Bearer <token>` (RFC 6750 2.1): case-insensitive scheme, then one
 * token of visible ASCII (trailing spaces are trimmed by Headers); group 1 is the token.
 */
const BEARER = /^Bearer +([\x21-\x7E]+)$/i;

/**
 * The bearer token of a request, for the caller guard and the admin guard alike.
 *
 * @param headers - the request headers.
 * @param kind - what the token is, for the messages: `token` or `admin token`.
 * @returns the token (never empty).
 * @throws {UnauthorizedError} 401 `unauthorized` when the header is missing or not
 *   `Bearer <token>`.
 */
export function bearerToken(headers: Headers, kind: string): string {
  const header = headers.get('Authorization');
  if (header === null) throw new UnauthorizedError(`Missing Authorization: Bearer <${kind}>`);
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) {
    throw new UnauthorizedError(`Authorization header must be "Bearer <${kind}>"`);
  }
  return token;
}
