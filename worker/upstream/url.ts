import * as v from 'valibot';
import { ReferenceSchema } from '../../lib/shared.ts';
import { type ErrorIssue, HttpError, InternalError } from '../http/errors.ts';

/** A path parameter the proxy can forward: the reference rules, and no `/` once decoded. */
const PathParamSchema = v.pipe(
  ReferenceSchema,
  v.check((text) => !text.includes('/'), 'Expected no "/" in a path parameter'),
);

/**
 * The upstream path for a route: `pattern` with each `:param` replaced by its decoded
 * value (see `decodeParams`), checked against the reference rules (1 to 100 printable
 * characters, no space, no `/`, not `.` or `..`) and percent-encoded again with
 * `encodeURIComponent`, so what reaches the upstream is exactly one segment, whatever
 * the upstream decodes before routing.
 *
 * @param pattern - the route pattern, e.g. `/payments/verify/:reference`.
 * @param params - decoded values by name.
 * @returns the path, starting with `/`.
 * @throws {HttpError} 400 `validation_failed` listing each parameter that breaks the rules.
 */
export function fillPattern(pattern: string, params: Readonly<Record<string, string>>): string {
  const issues: ErrorIssue[] = [];
  const path = pattern.replace(/:(\w+)/g, (_, name: string) => {
    const parsed = v.safeParse(PathParamSchema, params[name] ?? '');
    if (parsed.success) return encodeURIComponent(parsed.output);
    for (const issue of parsed.issues) issues.push({ path: name, message: issue.message });
    return '';
  });
  if (issues.length > 0) {
    throw new HttpError(400, 'validation_failed', 'The request path is invalid', { issues });
  }
  return path;
}

/**
 * Whether `path` (a filled path, segments encoded) has the shape of `pattern`: the same
 * number of segments, literal ones equal, `:param` ones non-empty.
 *
 * @param pattern - e.g. `/refunds/:refund_reference`.
 * @param path - e.g. `/refunds/count-by-status`.
 */
export function matchesPattern(pattern: string, path: string): boolean {
  const expected = pattern.split('/');
  const actual = path.split('/');
  return (
    expected.length === actual.length &&
    expected.every((segment, index) =>
      segment.startsWith(':') ? actual[index] !== '' : segment === actual[index],
    )
  );
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
