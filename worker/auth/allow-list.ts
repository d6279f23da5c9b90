import * as v from 'valibot';

/**
 * The routes a caller may use, compiled once from its `routes` patterns: exact route
 * names (`banks.list`), a prefix wildcard (`payments.*` matches every name starting
 * with `payments.`, at any depth), or `*` alone for every route.
 */
interface RouteAllowList {
  /** The patterns as configured, for messages and logs. */
  readonly patterns: readonly string[];
  /**
   * Whether `routeName` is allowed.
   *
   * @param routeName - an endpoint's name from the SDK's table (`ENDPOINTS`), e.g. `payments.initialize`.
   */
  allows(routeName: string): boolean;
}

// A dotted name of identifier segments, optionally ending in `.*`; or `*` alone.
const PATTERN = /^(\*|[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*(\.\*)?)$/;

/**
 * The schema of a caller's `routes` (the `GATEWAY_CALLERS` entry field): an array of
 * patterns, transformed into a {@link RouteAllowList}. An empty array allows nothing.
 */
export const RouteAllowListSchema = v.pipe(
  v.array(v.pipe(v.string(), v.regex(PATTERN, 'a route name, `prefix.*` or `*`'))),
  v.transform((patterns: string[]) => compileAllowList(patterns)),
);

/**
 * Compiles route patterns into a matcher (exact names in a set, prefixes in a list).
 *
 * @param patterns - exact names, `prefix.*` wildcards or `*`.
 * @returns the allow-list.
 */
export function compileAllowList(patterns: readonly string[]): RouteAllowList {
  const everything = patterns.includes('*');
  const exact = new Set(patterns.filter((pattern) => !pattern.endsWith('*')));
  // `payments.*` keeps its dot so it never matches `paymentsAdmin.list`.
  const prefixes = patterns
    .filter((pattern) => pattern.endsWith('.*'))
    .map((pattern) => pattern.slice(0, -1));
  return {
    patterns: Object.freeze([...patterns]),
    allows: (routeName) =>
      everything || exact.has(routeName) || prefixes.some((prefix) => routeName.startsWith(prefix)),
  };
}
