import { AutoRouter, type AutoRouterType, type IRequest } from 'itty-router';
import { authenticateAdmin } from './auth/admin.ts';
import { authenticate } from './auth/authenticate.ts';
import { beginRequest, contextOf } from './http/context.ts';
import { finalizeResponse, renderError } from './http/respond.ts';
import { countDeliveries, retryDelivery } from './routes/admin/deliveries.ts';
import { getEvent, listEvents, replayEvent } from './routes/admin/events.ts';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  updateSubscription,
} from './routes/admin/subscriptions.ts';
import { fallback } from './routes/fallback.ts';
import { GATEWAY_ROUTES, type GatewayRouteName } from './routes/gateway-routes.ts';
import { health } from './routes/health.ts';
import { openapi } from './routes/openapi.ts';
import { proxyRoute } from './routes/proxy.ts';
import { ingestWebhook } from './routes/webhooks.ts';
import { UPSTREAM_ROUTES } from './upstream/routes.ts';

/**
 * Paths that need no bearer token (DESIGN 4.1), read from `GATEWAY_ROUTES`: the health
 * check (`auth: 'none'`) and the webhook ingress (`auth: 'webhook-signature'`, the
 * provider's HMAC headers instead). Admin paths (`/admin/*`) need the admin token instead
 * of a caller's (DESIGN 4.3).
 */
export const OPEN_PATHS: ReadonlySet<string> = new Set(
  GATEWAY_ROUTES.filter((r) => r.auth === 'none' || r.auth === 'webhook-signature').map(
    (r) => r.pattern,
  ),
);

/** The gateway's router: `fetch(request, env, ctx)` as a Worker handler expects. */
export type GatewayRouter = AutoRouterType<IRequest, [Env, ExecutionContext]>;

const REGISTER = { GET: 'get', POST: 'post', PATCH: 'patch', DELETE: 'delete' } as const;

/** An itty-router handler of a gateway route. */
type RouteHandler = (
  request: IRequest,
  env: Env,
  ctx: ExecutionContext,
) => Response | Promise<Response>;

/**
 * The handler of each route in `GATEWAY_ROUTES`, by route name; the type demands exactly
 * one per name, so a route cannot be described without being served or the reverse.
 */
const HANDLERS: Readonly<Record<GatewayRouteName, RouteHandler>> = {
  health,
  openapi,
  'webhooks.ingest': ingestWebhook,
  'admin.subscriptions.create': createSubscription,
  'admin.subscriptions.list': listSubscriptions,
  'admin.subscriptions.get': getSubscription,
  'admin.subscriptions.update': updateSubscription,
  'admin.subscriptions.delete': deleteSubscription,
  'admin.subscriptions.rotate_secret': rotateSubscriptionSecret,
  'admin.events.list': listEvents,
  'admin.events.get': getEvent,
  'admin.events.replay': replayEvent,
  'admin.deliveries.counts': countDeliveries,
  'admin.deliveries.retry': retryDelivery,
};

/**
 * Assembles the gateway: itty-router's AutoRouter with the `before` stages (request
 * context, caller authentication, the admin guard), the gateway's own routes from
 * `GATEWAY_ROUTES` (health check, OpenAPI document, webhook ingress, the admin API's
 * subscription, event and delivery routes), one proxy route per spec endpoint, a
 * 404/405 catch-all, the `catch` stage rendering DESIGN 4.4 error bodies, and the
 * `finally` stage stamping `X-Request-Id` and writing the access log. The
 * upstream is reached with the global `fetch`.
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
    before: [beginRequest, authenticate(OPEN_PATHS), authenticateAdmin],
    catch: renderError,
    finally: [finalizeResponse],
  });
  for (const route of GATEWAY_ROUTES) {
    const handler = HANDLERS[route.name];
    // The access log's `route` is the table's name, set here once for every handler.
    router[REGISTER[route.method]](route.pattern, (request, env, ctx) => {
      contextOf(request).routeName = route.name;
      return handler(request, env, ctx);
    });
  }
  for (const route of UPSTREAM_ROUTES) {
    router[REGISTER[route.method]](route.pattern, proxyRoute(route));
  }
  const registered = () => router.routes;
  router.all('*', fallback(registered));
  return router;
}
