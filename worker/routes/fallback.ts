import type { IRequest, RouteEntry } from 'itty-router';
import { MethodNotAllowedError, RouteNotFoundError } from '../http/errors.ts';

/**
 * The catch-all handler, registered last: 405 `method_not_allowed` with `Allow` when
 * another method is registered for the path, else 404 `not_found`.
 *
 * @param routes - the router's registered routes (read at request time).
 * @returns an itty-router handler that always throws.
 * @throws {MethodNotAllowedError} when the path is known.
 * @throws {RouteNotFoundError} otherwise.
 */
export function fallback(routes: () => readonly RouteEntry[]): (request: IRequest) => never {
  return (request) => {
    const { pathname } = new URL(request.url);
    const allowed = new Set<string>();
    for (const [method, pattern] of routes()) {
      if (method !== 'ALL' && pattern.test(pathname)) allowed.add(method);
    }
    if (allowed.size > 0) throw new MethodNotAllowedError(request.method, [...allowed]);
    throw new RouteNotFoundError(request.method, pathname);
  };
}
