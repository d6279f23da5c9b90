import type { IRequest } from 'itty-router';
import { timingSafeEqual } from '../../lib/shared.ts';
import { settingsOf } from '../config.ts';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { reserveAdminSignIn } from '../rate-limit/admin-failures.ts';
import { bearerToken } from './bearer.ts';

/**
 * Route middleware guarding the admin API: requires `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time. Gateway caller tokens are not admin tokens. An unset or
 * empty `ADMIN_TOKEN` turns the admin API off (every request refused). Every presented
 * token (malformed, wrong or right; not a missing header) first reserves a failed sign-in
 * in its client address's budget and the gateway's (worker/rate-limit/admin-failures.ts),
 * given back when the token is right (concurrent requests with one token share one
 * reservation, so an operator's parallel requests never refuse each other): a spent budget answers 429 before anything is
 * compared, whatever token is sent, and concurrent guesses never get more comparisons
 * than the budgets hold. The router mounts it on every route whose `auth` is `admin`.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `ADMIN_TOKEN`, `RATE_LIMITER`.
 * @returns nothing, so the router moves on.
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` while the address or the
 *   gateway is throttled, or while the limiter cannot be reached.
 * @throws {ConfigurationError} 503 when the settings are invalid.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or not the admin token.
 */
export async function requireAdmin(request: IRequest, env: Env): Promise<undefined> {
  await checkAdminToken(request, env, settingsOf(env).adminToken);
  return undefined;
}

/**
 * The admin guard's check of the token against `expected`, for a handler that reads the
 * admin token itself: the health check, which names the invalid settings to the admin
 * while the settings as a whole cannot be read. Same reservation of a failed sign-in
 * before the comparison, same constant-time compare, same refund when the token is right
 * as {@link requireAdmin}; with `expected` undefined no token is right (and the
 * reservation is kept, as for any failed sign-in).
 *
 * @param request - the incoming request.
 * @param env - the bindings: `RATE_LIMITER`.
 * @param expected - the admin token, or `undefined` when none can be accepted.
 * @returns once the token is the admin token.
 * @throws {HttpError} 429 `rate_limited` with `Retry-After`, as {@link requireAdmin}.
 * @throws {UnauthorizedError} 401 `unauthorized` when the header is missing, malformed or
 *   not `expected`.
 */
export async function checkAdminToken(
  request: IRequest,
  env: Env,
  expected: string | undefined,
): Promise<void> {
  // No header at all is not a guess (a browser before sign-in): refused below, not counted.
  const slot = request.headers.has('Authorization')
    ? await reserveAdminSignIn(env, request.headers, contextOf(request))
    : undefined;
  let right = false;
  try {
    const token = bearerToken(request.headers, 'admin token');
    right = expected !== undefined && timingSafeEqual(expected, token);
  } finally {
    await slot?.release(right ? 'refund' : 'keep');
  }
  if (!right) throw new UnauthorizedError('Invalid admin token');
}
