import type { IRequest, RouteEntry } from 'itty-router';
import { MethodNotAllowedError, RouteNotFoundError } from '../http/errors.ts';

/**
 * The handler of a known path asked with a method it does not serve: 405
 * `method_not_allowed` with `Allow` listing every method registered for the path (across
 * all the patterns that match it).
 *
 * @param routes - the router's registered routes (read at request time).
 * @returns an itty-router handler that always throws.
 * @throws {MethodNotAllowedError} always.
 */
export function methodNotAllowed(
  routes: () => readonly RouteEntry[],
): (request: IRequest) => never {
  return (request) => {
    const { pathname } = new URL(request.url);
    const allowed = new Set<string>();
    for (const [method, pattern] of routes()) {
      if (method !== 'ALL' && pattern.test(pathname)) allowed.add(method);
    }
    throw new MethodNotAllowedError(request.method, [...allowed]);
  };
}

/**
 * The handler of a path no route serves: 404 `not_found`.
 *
 * @param request - the incoming request.
 * @throws {RouteNotFoundError} always.
 */
export function notFound(request: IRequest): never {
  throw new RouteNotFoundError(request.method, new URL(request.url).pathname);
}
