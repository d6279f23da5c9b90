/**
 * `Authorization: Bearer <token>` (RFC 6750 2.1): case-insensitive scheme, then one
 * token of visible ASCII (trailing spaces are trimmed by Headers); group 1 is the token.
 * Shared by the caller authentication and the admin guard.
 */
export const BEARER = /^Bearer +([\x21-\x7E]+)$/i;
