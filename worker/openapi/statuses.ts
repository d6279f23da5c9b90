// The error statuses each route can answer, as the OpenAPI document lists them: facts of
// the document, derived from the route's data (its authentication, body, query, path).

import type { GatewayRoute } from '../routes/route.ts';
import { BODY_ONLY_STATUSES, ERROR_RESPONSES } from './components.ts';

const PROXY_ERROR_STATUSES = ERROR_RESPONSES.map((response) => response.status);

/**
 * The error statuses a route can answer. A proxied route: every status of the proxy's
 * error table (the upstream's own errors pass through with their status), 413 and 415
 * only when it takes a body. One of the gateway's own routes: 401 unless open, 429 where
 * the admin token is taken (failed sign-ins are throttled), 400 when
 * it validates a body or a query, 413 and 415 with a body, 404 with a path parameter (an
 * unknown record), 500 unless it touches nothing, and the route's `extraErrors`. A
 * `failureResponse`'s status is not among them: it is answered with the route's own body.
 *
 * @param route - the route.
 * @returns the statuses, ascending.
 */
export function errorStatuses(route: GatewayRoute): number[] {
  if (route.endpoint !== undefined) {
    const takesBody = route.method !== 'GET';
    return PROXY_ERROR_STATUSES.filter((status) => takesBody || !BODY_ONLY_STATUSES.has(status));
  }
  const statuses = new Set<number>(route.extraErrors);
  if (route.auth !== 'none') statuses.add(401).add(500);
  // Failed admin sign-ins are throttled per client address.
  if (route.auth === 'admin' || route.auth === 'none-or-admin') statuses.add(429);
  if (route.body !== undefined || route.query !== undefined) statuses.add(400);
  if (route.body !== undefined) statuses.add(413).add(415);
  if (route.pattern.includes('/:')) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}
