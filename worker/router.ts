import { AutoRouter, type AutoRouterType, type IRequest } from 'itty-router';
import { requireAdmin } from './auth/admin.ts';
import { requireCaller } from './auth/authenticate.ts';
import { settingsOf } from './config.ts';
import { beginRequest, contextOf } from './http/context.ts';
import { decodeParams } from './http/params.ts';
import { finalizeResponse, renderError } from './http/respond.ts';
import { methodNotAllowed, notFound } from './routes/fallback.ts';
import { HEALTH_PATH } from './routes/health.ts';
import { proxyRoute } from './routes/proxy.ts';
import type { GatewayAuth, RouteHandler, ServedRoute } from './routes/route.ts';
import { ROUTES } from './routes/table.ts';

/** The gateway's router: `fetch(request, env, ctx)` as a Worker handler expects. */
type GatewayRouter = AutoRouterType<IRequest, [Env, ExecutionContext]>;

const REGISTER = { GET: 'get', POST: 'post', PATCH: 'patch', DELETE: 'delete' } as const;

/**
 * The middleware enforcing each kind of route authentication. The webhook ingress has
 * none here: the provider's signature covers the exact body bytes, so the handler checks
 * it once it has read them (before anything else is done with the request). Neither has
 * `none-or-admin`: the handler calls `requireAdmin` for its privileged variant only.
 */
const AUTH: Readonly<Record<GatewayAuth, Middleware | undefined>> = {
  none: undefined,
  'none-or-admin': undefined,
  bearer: requireCaller,
  admin: requireAdmin,
  'webhook-signature': undefined,
};

/**
 * Assembles the gateway on itty-router's AutoRouter: a `before` stage creating the
 * request context (request id, arrival time); every route of `ROUTES` registered with the
 * authentication it declares as route middleware (`router.get(path, requireCaller,
 * handler)`), then the handler of its row (the gateway's own, its query validated by the
 * row's rule first, or the proxy pipeline of its endpoint); a 404/405 catch-all; the `catch` stage rendering error bodies; and the
 * `finally` stage stamping `X-Request-Id` and writing the access log. The upstream is
 * reached with the global `fetch`.
 *
 * @returns the router; call `router.fetch(request, env, ctx)`.
 *
 * @example
 * ```ts
 * const router = createRouter();
 * export default { fetch: (request, env, ctx) => router.fetch(request, env, ctx) };
 * ```
 */
export function createRouter(): GatewayRouter {
  const router = AutoRouter<IRequest, [Env, ExecutionContext]>({
    before: [beginRequest],
    catch: renderError,
    finally: [finalizeResponse],
  });
  for (const route of ROUTES) {
    const auth = AUTH[route.auth];
    // The access log names the route from the table, before authentication can fail.
    const named = (request: IRequest) => {
      contextOf(request).routeName = route.name;
      return undefined;
    };
    const params = route.pattern.includes('/:') ? decodeParams : undefined;
    // The health check reports invalid settings itself; every other route refuses to run.
    const settings = route.pattern === HEALTH_PATH ? undefined : requireValidSettings;
    add(
      router,
      REGISTER[route.method],
      route.pattern,
      named,
      settings,
      auth,
      params,
      handlerOf(route),
    );
  }
  // A known path with another method: 405, after the path's own authentication.
  const registered = () => router.routes;
  const auths = new Map(ROUTES.map((route) => [route.pattern, route.auth]));
  for (const [pattern, auth] of auths) {
    add(router, 'all', pattern, requireValidSettings, AUTH[auth], methodNotAllowed(registered));
  }
  // Unknown paths: 404 only with a token of their namespace (the admin API's, or a
  // caller's), so an unauthenticated client learns nothing about which paths exist.
  add(router, 'all', ADMIN_PATH, requireValidSettings, requireAdmin, notFound);
  add(router, 'all', `${ADMIN_PATH}/*`, requireValidSettings, requireAdmin, notFound);
  add(router, 'all', '*', requireValidSettings, requireCaller, notFound);
  return router;
}

/**
 * Route middleware reading the settings once and putting them on the request context,
 * where every later step reads them; it refuses the request while they are invalid (503
 * `configuration_error` naming the variables). Mounted first on every route but the
 * health check's GET (which reports the problem itself), after the route is named, so
 * the access log says which route was refused.
 *
 * @throws {ConfigurationError} 503 when the settings are invalid.
 */
function requireValidSettings(request: IRequest, env: Env): undefined {
  contextOf(request).settings = settingsOf(env);
  return undefined;
}

/** The admin API's namespace: every path under it takes the admin token. */
const ADMIN_PATH = '/admin';

type Middleware = (
  request: IRequest,
  env: Env,
) => undefined | Response | Promise<Response | undefined>;

// Registers `handlers` in order on `pattern`, skipping an absent authentication step.
function add(
  router: GatewayRouter,
  method: (typeof REGISTER)[keyof typeof REGISTER] | 'all',
  pattern: string,
  ...handlers: Array<Middleware | RouteHandler | undefined>
): void {
  router[method](pattern, ...(handlers.filter((h) => h !== undefined) as RouteHandler[]));
}

// A route's own handler, or the proxy pipeline of its endpoint.
function handlerOf(route: ServedRoute): RouteHandler {
  return route.endpoint === undefined ? route.handler : proxyRoute(route);
}
