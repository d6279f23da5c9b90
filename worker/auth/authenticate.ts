import type { IRequest } from 'itty-router';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { bearerToken } from './bearer.ts';
import { findCaller, loadCallers } from './callers.ts';

/**
 * Route middleware requiring a caller token: `Authorization: Bearer <token>` checked
 * against `GATEWAY_CALLERS`; the caller's name goes on the request context (never the
 * token). The router mounts it on every route whose `auth` is `bearer`.
 *
 * @param request - the incoming request.
 * @param env - the bindings: `GATEWAY_CALLERS`.
 * @returns nothing, so the router moves on to the handler.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or the token is unknown.
 * @throws {InternalError} 500 when `GATEWAY_CALLERS` is malformed.
 *
 * @example
 * ```ts
 * router.get('/payments/verify/:reference', requireCaller, handler);
 * ```
 */
export function requireCaller(request: IRequest, env: Env): undefined {
  const token = bearerToken(request.headers, 'token');
  const caller = findCaller(loadCallers(env.GATEWAY_CALLERS), token);
  if (caller === undefined) throw new UnauthorizedError('Invalid bearer token');
  contextOf(request).caller = caller.name;
  return undefined;
}
