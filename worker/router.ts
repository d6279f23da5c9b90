import { AutoRouter, type AutoRouterType, type IRequest } from 'itty-router';
import { authenticateAdmin } from './auth/admin.ts';
import { authenticate } from './auth/authenticate.ts';
import { beginRequest } from './http/context.ts';
import { finalizeResponse, renderError } from './http/respond.ts';
import {
  ADMIN_DELIVERIES_PATH,
  countDeliveries,
  retryDelivery,
} from './routes/admin/deliveries.ts';
import { ADMIN_EVENTS_PATH, getEvent, listEvents, replayEvent } from './routes/admin/events.ts';
import {
  ADMIN_SUBSCRIPTIONS_PATH,
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  updateSubscription,
} from './routes/admin/subscriptions.ts';
import { fallback } from './routes/fallback.ts';
import { HEALTH_PATH, health } from './routes/health.ts';
import { OPENAPI_PATH, openapi } from './routes/openapi.ts';
import { proxyRoute } from './routes/proxy.ts';
import { ingestWebhook, WEBHOOKS_PATH } from './routes/webhooks.ts';
import { UPSTREAM_ROUTES } from './upstream/routes.ts';

/**
 * Paths that need no bearer token (DESIGN 4.1): the health check and the webhook
 * ingress (authenticated by the provider's HMAC headers instead). Admin paths
 * (`/admin/*`) need the admin token instead of a caller's (DESIGN 4.3).
 */
export const OPEN_PATHS: ReadonlySet<string> = new Set([HEALTH_PATH, WEBHOOKS_PATH]);

/** The gateway's router: `fetch(request, env, ctx)` as a Worker handler expects. */
export type GatewayRouter = AutoRouterType<IRequest, [Env, ExecutionContext]>;

const REGISTER = { GET: 'get', POST: 'post', PATCH: 'patch' } as const;

/**
 * Assembles the gateway: itty-router's AutoRouter with the `before` stages (request
 * context, caller authentication, the admin guard), the health check, the webhook
 * ingress, the admin API's subscription, event and delivery routes, one proxy route per spec endpoint, a
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
  router.get(HEALTH_PATH, health);
  router.get(OPENAPI_PATH, openapi);
  router.post(WEBHOOKS_PATH, ingestWebhook);
  const subscription = `${ADMIN_SUBSCRIPTIONS_PATH}/:id`;
  router.post(ADMIN_SUBSCRIPTIONS_PATH, createSubscription);
  router.get(ADMIN_SUBSCRIPTIONS_PATH, listSubscriptions);
  router.get(subscription, getSubscription);
  router.patch(subscription, updateSubscription);
  router.delete(subscription, deleteSubscription);
  router.post(`${subscription}/rotate-secret`, rotateSubscriptionSecret);
  router.get(ADMIN_EVENTS_PATH, listEvents);
  router.get(`${ADMIN_EVENTS_PATH}/:id`, getEvent);
  router.post(`${ADMIN_EVENTS_PATH}/:id/replay`, replayEvent);
  router.get(`${ADMIN_DELIVERIES_PATH}/counts`, countDeliveries);
  router.post(`${ADMIN_DELIVERIES_PATH}/:id/retry`, retryDelivery);
  for (const route of UPSTREAM_ROUTES) {
    router[REGISTER[route.method]](route.pattern, proxyRoute(route));
  }
  const registered = () => router.routes;
  router.all('*', fallback(registered));
  return router;
}
