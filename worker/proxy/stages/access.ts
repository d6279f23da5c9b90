import { settingsIn } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { enforceRateLimit } from '../../rate-limit/enforce.ts';
import type { ProxyRoute } from '../../routes/route.ts';
import type { ProxyStage } from '../pipeline.ts';

/**
 * The proxy stage deciding who may call a route and how often,
 * first in every route's pipeline, so nothing else runs and nothing leaves for a refused
 * request: the caller's `routes` allow-list from `GATEWAY_CALLERS` (403 `forbidden`),
 * then its rate limit (429 `rate_limited` with `Retry-After`, when
 * `RATE_LIMIT_PER_MINUTE` is above 0).
 *
 * @param route - the route being proxied; its `name` is matched against the allow-list.
 * @returns the stage (every route has one).
 * @throws {HttpError} 403 `forbidden` outside the caller's routes (or without a caller).
 * @throws {HttpError} 429 `rate_limited` over the caller's limit.
 */
export function accessStage(route: ProxyRoute): ProxyStage | undefined {
  return async (exchange, next) => {
    const { env, context } = exchange;
    const caller = context.callerEntry;
    if (
      caller === undefined ||
      (caller.routes !== undefined && !caller.routes.allows(route.name))
    ) {
      throw new HttpError(403, 'forbidden', `This caller may not use ${route.name}`);
    }
    await enforceRateLimit(env, settingsIn(context).rateLimitPerMinute, context);
    return next();
  };
}
