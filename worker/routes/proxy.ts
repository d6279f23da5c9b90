import type { IRequest } from 'itty-router';
import { readCapped } from '../../lib/shared.ts';
import { contextOf, settingsIn } from '../http/context.ts';
import { HttpError } from '../http/errors.ts';
import { forwardUpstream } from '../proxy/forward.ts';
import { composeStages, type ProxyStage } from '../proxy/pipeline.ts';
import { accessStage } from '../proxy/stages/access.ts';
import { cacheStage } from '../proxy/stages/cache.ts';
import { idempotencyStage } from '../proxy/stages/idempotency.ts';
import { validationStage } from '../proxy/stages/validate.ts';
import { fillPattern, matchesPattern } from '../upstream/url.ts';
import type { ProxyRoute } from './route.ts';
import { PROXY_ROUTES } from './table.ts';

/**
 * The stages run before forwarding, outermost first, chosen from the route's data:
 * who may call it and how often (403/429), what may be sent (413/415/400), exactly once
 * (Idempotency-Key in D1), then the KV cache in front of the upstream.
 *
 * @param route - the route being proxied.
 * @returns the stages for that route.
 */
function stagesFor(route: ProxyRoute): readonly ProxyStage[] {
  return [
    accessStage(route),
    validationStage(route),
    idempotencyStage(route),
    cacheStage(route),
  ].filter((stage): stage is ProxyStage => stage !== undefined);
}

/**
 * The handler of one proxied endpoint: reads the body bytes once (capped) and runs the
 * route's pipeline ending in the upstream call. The router has already named the route
 * on the request context and authenticated the caller.
 *
 * @param route - the endpoint.
 * @returns an itty-router handler.
 * @throws {HttpError} 400 `validation_failed` when a path parameter breaks the reference
 *   rules or decodes to another endpoint's path.
 */
export function proxyRoute(
  route: ProxyRoute,
): (request: IRequest, env: Env, ctx: ExecutionContext) => Promise<Response> {
  const run = composeStages(stagesFor(route), forwardUpstream);
  // The routes a filled path could be routed to instead of this one: those tried before it
  // with the same method (a path without parameters is always its own).
  const earlier = route.pattern.includes('/:')
    ? PROXY_ROUTES.slice(0, PROXY_ROUTES.indexOf(route)).filter((o) => o.method === route.method)
    : [];
  return async (request, env, ctx) => {
    const context = contextOf(request);
    const url = new URL(request.url);
    const path = fillPattern(route.pattern, request.params);
    // `count-by-statu%73` decodes to another endpoint's literal path: its allow-list and
    // rules would be skipped, so it is refused rather than sent.
    if (earlier.some((other) => matchesPattern(other.pattern, path))) {
      throw new HttpError(400, 'validation_failed', 'The request path is invalid', {
        issues: [{ path: 'path', message: `Decodes to ${path}, which is another endpoint` }],
      });
    }
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : await readCapped(request, settingsIn(context).maxBodyBytes);
    const waitUntil = (work: Promise<unknown>) => ctx.waitUntil(work);
    return run({ request, env, context, route, path, search: url.search, body, waitUntil });
  };
}
