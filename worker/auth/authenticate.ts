import type { IRequest } from 'itty-router';
import { contextOf, settingsIn } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { PROXY_ROUTES } from '../routes/table.ts';
import { compileAllowList } from './allow-list.ts';
import { bearerToken } from './bearer.ts';
import { type Caller, findCaller } from './callers.ts';

/**
 * Route middleware requiring a caller token: `Authorization: Bearer <token>` checked
 * against `GATEWAY_CALLERS`; the caller's name goes on the request context (never the
 * token), with the caller's entry (its allow-list). The router mounts it on every route
 * whose `auth` is `bearer`, after the step that loads the settings (`GATEWAY_CALLERS`).
 *
 * @param request - the incoming request.
 * @returns nothing, so the router moves on to the handler.
 * @throws {UnauthorizedError} 401 `unauthorized` (with `WWW-Authenticate: Bearer`) when the
 *   header is missing, malformed or the token is unknown.
 * @throws {InternalError} 500 when mounted before the settings are loaded (a wiring bug).
 *
 * @example
 * ```ts
 * router.get('/payments/verify/:reference', requireCaller, handler);
 * ```
 */
export function requireCaller(request: IRequest): undefined {
  const token = bearerToken(request.headers, 'token');
  const context = contextOf(request);
  const { callers } = settingsIn(context);
  warnUnmatchedPatterns(callers);
  const caller = findCaller(callers, token);
  if (caller === undefined) throw new UnauthorizedError('Invalid bearer token');
  context.caller = caller.name;
  context.callerEntry = caller;
  return undefined;
}

const warned = new WeakSet<readonly Caller[]>();

/**
 * Logs, once per callers list, each allow-list pattern that matches no route (a typo:
 * `config_warning`, naming the caller and the pattern, never a token).
 *
 * @param callers - the configured callers (the settings' `callers`).
 */
function warnUnmatchedPatterns(callers: readonly Caller[]): void {
  if (warned.has(callers)) return;
  warned.add(callers);
  for (const caller of callers) {
    for (const pattern of caller.routes?.patterns ?? []) {
      const single = compileAllowList([pattern]);
      if (!PROXY_ROUTES.some((route) => single.allows(route.name))) {
        logEvent('warn', 'config_warning', {
          setting: 'GATEWAY_CALLERS',
          caller: caller.name,
          problem: `route pattern ${pattern} matches no route`,
        });
      }
    }
  }
}
