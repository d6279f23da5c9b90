import type { IRequest } from 'itty-router';
import { timingSafeEqual } from '../../lib/shared.ts';
import { settingsOf } from '../config.ts';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { ADMIN_FAILURES_PER_MINUTE, adminFailureThrottle } from '../rate-limit/admin-failures.ts';
import { bearerToken } from './bearer.ts';

/**
 * Route middleware guarding the admin API: requires `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time. Gateway caller tokens are not admin tokens. An unset or
 * empty `ADMIN_TOKEN` turns the admin API off (every request refused). Failed sign-ins
 * (a token that is malformed or wrong; not a missing header) are counted per client
 * address: past {@link ADMIN_FAILURES_PER_MINUTE} a minute the address gets 429 until it
 * slows down, whatever token it sends. The router mounts it on every route whose `auth`
 * is `admin`.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `ADMIN_TOKEN`, `RATE_LIMITER`.
 * @returns nothing, so the router moves on.
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` while the address is throttled.
 * @throws {ConfigurationError} 503 when the settings are invalid.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or not the admin token.
 */
export async function requireAdmin(request: IRequest, env: Env): Promise<undefined> {
  // No header at all is not a guess (a browser before sign-in): refused, not counted.
  const presented = request.headers.has('Authorization');
  const throttle = adminFailureThrottle(env, request.headers, contextOf(request));
  if (presented) await throttle.check();
  try {
    const token = bearerToken(request.headers, 'admin token');
    const expected = settingsOf(env).adminToken;
    if (expected === undefined || !timingSafeEqual(expected, token)) {
      throw new UnauthorizedError('Invalid admin token');
    }
  } catch (error) {
    if (presented && error instanceof UnauthorizedError) await throttle.fail();
    throw error;
  }
  return undefined;
}
