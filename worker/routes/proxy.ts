import type { IRequest } from 'itty-router';
import { contextOf } from '../http/context.ts';
import { RouteNotFoundError } from '../http/errors.ts';
import { forwardUpstream } from '../proxy/forward.ts';
import { composeStages, type ProxyStage } from '../proxy/pipeline.ts';
import type { UpstreamRoute } from '../upstream/routes.ts';
import { fillPattern } from '../upstream/url.ts';

/**
 * The stages run before forwarding, outermost first, chosen from the route's data.
 * This is where later issues plug in: body limit and media type (413/415), valibot
 * validation (400), idempotency keys in D1 (`route.idempotency`), KV caching, per-caller
 * allow-lists and rate limits. The first slice has none.
 *
 * @param _route - the route being proxied.
 * @returns the stages for that route.
 */
export function stagesFor(_route: UpstreamRoute): readonly ProxyStage[] {
  return [];
}

/**
 * The handler of one spec endpoint (DESIGN 4.1): records the route on the request
 * context, reads the body bytes once, and runs the route's pipeline ending in the
 * upstream call.
 *
 * @param route - the endpoint.
 * @returns an itty-router handler.
 * @throws {RouteNotFoundError} 404 when a path segment is a dot segment.
 */
export function proxyRoute(
  route: UpstreamRoute,
): (request: IRequest, env: Env) => Promise<Response> {
  const run = composeStages(stagesFor(route), forwardUpstream);
  return async (request, env) => {
    const context = contextOf(request);
    context.routeName = route.name;
    const url = new URL(request.url);
    const path = fillPattern(route.pattern, request.params);
    if (path === undefined) throw new RouteNotFoundError(request.method, url.pathname);
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : new Uint8Array(await request.arrayBuffer());
    return run({ request, env, context, route, path, search: url.search, body });
  };
}
