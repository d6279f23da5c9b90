import type { IRequest } from 'itty-router';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { isAdminPath } from './admin.ts';
import { BEARER } from './bearer.ts';
import { findCaller, loadCallers } from './callers.ts';

/**
 * Creates the router's `before` stage that authenticates callers with
 * `Authorization: Bearer <token>` against `GATEWAY_CALLERS` (DESIGN 4.1) and records
 * the caller's name on the request context. Paths in `openPaths` skip it, and so do
 * admin paths (`/admin/*`), which `authenticateAdmin` guards with `ADMIN_TOKEN` instead.
 *
 * @param openPaths - paths (without trailing slash) that need no token, e.g. `/healthz`.
 * @returns the stage; it returns nothing so the router moves on.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or the token is unknown.
 * @throws {InternalError} 500 when `GATEWAY_CALLERS` is malformed.
 */
export function authenticate(
  openPaths: ReadonlySet<string>,
): (request: IRequest, env: Env) => undefined {
  return (request, env) => {
    const context = contextOf(request);
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    if (openPaths.has(path) || isAdminPath(path)) return undefined;
    const header = request.headers.get('Authorization');
    if (header === null) throw new UnauthorizedError('Missing Authorization: Bearer <token>');
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) {
      throw new UnauthorizedError('Authorization header must be "Bearer <token>"');
    }
    const caller = findCaller(loadCallers(env.GATEWAY_CALLERS), token);
    if (caller === undefined) throw new UnauthorizedError('Invalid bearer token');
    context.caller = caller.name;
    return undefined;
  };
}
