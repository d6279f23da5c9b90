import type { IRequest } from 'itty-router';
import { timingSafeEqual } from '../../lib/shared.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { bearerToken } from './bearer.ts';

/**
 * Route middleware guarding the admin API: requires `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time. Gateway caller tokens are not admin tokens. An unset or
 * empty `ADMIN_TOKEN` turns the admin API off (every request refused). The router mounts
 * it on every route whose `auth` is `admin`.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `ADMIN_TOKEN`.
 * @returns nothing, so the router moves on.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or not the admin token.
 */
export function requireAdmin(request: IRequest, env: Env): undefined {
  const token = bearerToken(request.headers, 'admin token');
  const expected = env.ADMIN_TOKEN ?? '';
  // An empty setting must not match anything (a bearer token is never empty anyway).
  if (expected === '' || !timingSafeEqual(expected, token)) {
    throw new UnauthorizedError('Invalid admin token');
  }
  return undefined;
}
