import type { IRequest } from 'itty-router';
import { timingSafeEqual } from '../../lib/internal/timing-safe-equal.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { BEARER } from './bearer.ts';

/** Path prefix of the admin API (DESIGN 4.3); its requests carry `ADMIN_TOKEN`, not a caller token. */
export const ADMIN_PREFIX = '/admin';

/**
 * Whether `pathname` belongs to the admin API: `/admin` itself or anything under `/admin/`
 * (not `/administrator`). The caller authentication skips exactly these paths and
 * {@link authenticateAdmin} guards exactly these, so every path gets one of the two.
 *
 * @param pathname - the request's URL path.
 */
export function isAdminPath(pathname: string): boolean {
  return pathname === ADMIN_PREFIX || pathname.startsWith(`${ADMIN_PREFIX}/`);
}

/**
 * The router's `before` stage guarding the admin API (DESIGN 4.3): on admin paths,
 * requires `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. Gateway
 * caller tokens are not admin tokens. An unset or empty `ADMIN_TOKEN` turns the admin
 * API off (every request refused). Other paths pass untouched.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `ADMIN_TOKEN`.
 * @returns nothing, so the router moves on.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or not the admin token.
 */
export function authenticateAdmin(request: IRequest, env: Env): undefined {
  if (!isAdminPath(new URL(request.url).pathname)) return undefined;
  const header = request.headers.get('Authorization');
  if (header === null) throw new UnauthorizedError('Missing Authorization: Bearer <admin token>');
  const token = BEARER.exec(header)?.[1];
  if (token === undefined) {
    throw new UnauthorizedError('Authorization header must be "Bearer <admin token>"');
  }
  const expected = env.ADMIN_TOKEN ?? '';
  // An empty setting must not match anything (BEARER never yields an empty token anyway).
  if (expected === '' || !timingSafeEqual(expected, token)) {
    throw new UnauthorizedError('Invalid admin token');
  }
  return undefined;
}
