import type { IRequest } from 'itty-router';
import { settingsOf } from '../config.ts';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { PROXY_ROUTES } from '../routes/table.ts';
import { compileAllowList } from './allow-list.ts';
import { bearerToken } from './bearer.ts';
import { type Caller, findCaller } from './callers.ts';

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
 * @throws {ConfigurationError} 503 when the settings are invalid.
 *
 * @example
 * ```ts
 * router.get('/payments/verify/:reference', requireCaller, handler);
 * ```
 */
export function requireCaller(request: IRequest, env: Env): undefined {
  const token = bearerToken(request.headers, 'token');
  const { callers } = settingsOf(env);
  warnUnmatchedPatterns(callers);
  const caller = findCaller(callers, token);
  if (caller === undefined) throw new UnauthorizedError('Invalid bearer token');
  contextOf(request).caller = caller.name;
  return undefined;
}

const warned = new WeakSet<readonly Caller[]>();

/**
 * Logs, once per callers list, each allow-list pattern that matches no route (a typo:
 * `config_warning`, naming the caller and the pattern, never a token).
 *
 * @param callers - the configured callers (`settingsOf(env).callers`).
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
