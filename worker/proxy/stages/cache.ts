import type { UpstreamRoute } from '../../upstream/routes.ts';
import type { ProxyStage } from '../pipeline.ts';

/**
 * The proxy stage for KV caching of GET /banks and POST /banks/resolve, issue 4 point 4.
 *
 * @param _route - the route being proxied.
 * @returns the stage, or `undefined` when the route needs none.
 */
export function cacheStage(_route: UpstreamRoute): ProxyStage | undefined {
  return undefined;
}
