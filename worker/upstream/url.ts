import { InternalError } from '../http/errors.ts';

/**
 * The upstream path for a route: `pattern` with each `:param` replaced by the
 * matched segment exactly as received (percent-encoding preserved, never decoded).
 *
 * @param pattern - the route pattern, e.g. `/payments/verify/:reference`.
 * @param params - matched segments by name (itty-router's `request.params`).
 * @returns the path, starting with `/`; `undefined` when a segment is missing, empty or a
 *   dot segment once decoded (it would change the path upstream).
 */
export function fillPattern(
  pattern: string,
  params: Readonly<Record<string, string>>,
): string | undefined {
  let valid = true;
  const path = pattern.replace(/:(\w+)/g, (_, name: string) => {
    const segment = params[name];
    if (segment === undefined || segment === '' || isDotSegment(segment)) valid = false;
    return segment ?? '';
  });
  return valid ? path : undefined;
}

/**
 * Joins the upstream base URL (which may carry a path prefix such as `/v1/`) with a
 * path and a raw query string: no double slashes, nothing re-encoded.
 *
 * @param base - `UPSTREAM_BASE_URL`, parsed.
 * @param path - an absolute path from {@link fillPattern}.
 * @param search - the query string as received, with its `?` (or `''`).
 * @returns the upstream URL.
 * @throws {InternalError} when the result escapes the base (a bug, never user input).
 */
export function joinUpstreamUrl(base: URL, path: string, search: string): URL {
  const prefix = base.pathname.replace(/\/+$/, '');
  const url = new URL(`${base.origin}${prefix}/${path.replace(/^\/+/, '')}${search}`);
  if (url.origin !== base.origin || !url.pathname.startsWith(`${prefix}/`)) {
    throw new InternalError(`upstream URL escapes UPSTREAM_BASE_URL for path ${path}`);
  }
  return url;
}

function isDotSegment(segment: string): boolean {
  const lower = segment.toLowerCase().replaceAll('%2e', '.');
  return lower === '.' || lower === '..';
}
