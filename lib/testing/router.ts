// A small route table: literal and `:param` segments, first match wins, 404 vs 405.
import type { SandboxRequestContext } from './request.ts';

/**
 * Who may call a route: `signed` endpoints verify the signature headers; `public`
 * ones (GET /banks) do not; both see injected faults. `control` (`/__sandbox/*`) and
 * `page` (checkout) routes are unsigned and never faulted.
 */
export type RouteAccess = 'signed' | 'public' | 'control' | 'page';

/** A route handler; throws SandboxHttpError for error responses. */
export type Handler = (ctx: SandboxRequestContext) => Response | Promise<Response>;

/** One entry of the route table. */
export interface Route {
  method: string;
  pattern: string;
  access: RouteAccess;
  handler: Handler;
  segments: string[];
}

/** Result of {@link matchRoute}. */
export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

/**
 * Declares a route.
 *
 * @param method - HTTP method.
 * @param pattern - path with `:name` segments, e.g. `/payments/verify/:reference`.
 * @param access - see {@link RouteAccess}.
 * @param handler - the handler.
 */
export function route(
  method: string,
  pattern: string,
  access: RouteAccess,
  handler: Handler,
): Route {
  return { method, pattern, access, handler, segments: pattern.split('/').slice(1) };
}

/**
 * Finds the first route matching `pathname` and `method`. When only other methods
 * match the path, answers `method_not_allowed` with their list (for `Allow`).
 *
 * @param routes - the table, in priority order (literal routes before `:param` ones).
 * @param method - the request method.
 * @param pathname - the URL path (percent-encoded).
 */
export function matchRoute(routes: Route[], method: string, pathname: string): RouteMatch {
  const parts = pathname.split('/').slice(1);
  const allow = new Set<string>();
  for (const candidate of routes) {
    const params = matchSegments(candidate.segments, parts);
    if (params === undefined) continue;
    if (candidate.method === method) return { kind: 'found', route: candidate, params };
    allow.add(candidate.method);
  }
  return allow.size > 0 ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'not_found' };
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i] ?? '';
    const actual = parts[i] ?? '';
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}
