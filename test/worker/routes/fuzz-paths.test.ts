/**
 * Fuzzing path parameters and paths: every route with a `:param` (proxied and admin)
 * sent arbitrary segments (dot segments, `%2F`, `%2e%2e`, bad escapes such as `%FF`,
 * control characters, Unicode, very long runs), and arbitrary paths under every method
 * with and without a token. Never a 500; every error is the error body.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GatewayRoute } from '../../../worker/routes/route.ts';
import { ROUTES } from '../../../worker/routes/table.ts';
import { fillPattern } from '../../../worker/upstream/url.ts';
import {
  anyString,
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  pathParam,
  percentEncode,
  routeLabels,
  routeNamed,
  UPSTREAM_5XX,
  useFuzzTally,
} from '../fuzz-helpers.ts';
import { CALLER_TOKEN, gatewayRequest } from '../helpers.ts';
import { ADMIN_TOKEN } from './admin/admin-helpers.ts';

const tally = useFuzzTally('path parameters');
const WITH_PARAMS = ROUTES.filter((route) => route.pattern.includes('/:'));
const PREFIXES = ['/', '/admin/', '/admin/events/', '/payments/verify/', '/webhooks/', '/banks/'];
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'];

/** The token a route's authentication takes, or none for open routes. */
function tokenFor(route: GatewayRoute): string | null {
  if (route.auth === 'admin') return ADMIN_TOKEN;
  return route.auth === 'bearer' ? CALLER_TOKEN : null;
}

/**
 * A request to `route` with `segments` in its parameters: writes carry an empty object
 * (a valid body of the body-less routes) and a fresh Idempotency-Key.
 */
function requestTo(route: GatewayRoute, segments: readonly string[]): Request {
  let next = 0;
  const path = route.pattern.replace(/:\w+/g, () => segments[next++ % segments.length] ?? '');
  const write = route.method !== 'GET' && route.method !== 'DELETE';
  return gatewayRequest(path, {
    token: tokenFor(route),
    method: route.method,
    ...(write
      ? {
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
          body: '{}',
        }
      : {}),
  });
}

/** Whether `pathname` still has the shape of the route's pattern (each parameter non-empty). */
function matches(route: GatewayRoute, pathname: string): boolean {
  const literal = route.pattern.replace(/[.]/g, '\\.').replace(/:\w+/g, '[^/]+');
  return new RegExp(`^${literal}$`).test(pathname);
}

/** Whether the proxy would forward `pathname`'s parameters: decodable and within the rules. */
function forwardable(route: GatewayRoute, pathname: string): boolean {
  const parts = pathname.split('/');
  const params: Record<string, string> = {};
  try {
    route.pattern.split('/').forEach((name, index) => {
      if (name.startsWith(':')) params[name.slice(1)] = decodeURIComponent(parts[index] ?? '');
    });
    fillPattern(route.pattern, params);
    return true;
  } catch {
    return false;
  }
}

describe('fuzz: paths', () => {
  it('should answer arbitrary path parameters of every route without a 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        routeLabels(WITH_PARAMS),
        fc.array(pathParam, { minLength: 1, maxLength: 2 }),
        async (label, segments) => {
          const route = routeNamed(WITH_PARAMS, label);
          const request = requestTo(route, segments);
          const upstream = route.endpoint !== undefined;
          const answer = await fuzzFetch(request, { allowed5xx: upstream ? UPSTREAM_5XX : [] });
          tally.record('route parameters', answer.status);
          // Only a parameter the proxy may forward can name a record (the fuzz tests'
          // bodies create records under arbitrary references), unless URL parsing moved
          // the request to another route (`..` and empty segments are resolved away).
          const { pathname } = new URL(request.url);
          const found = upstream && answer.status < 300 && forwardable(route, pathname);
          if (matches(route, pathname) && !found) {
            expect(answer.status, `${label} ${request.url}`).toBeGreaterThanOrEqual(400);
          }
        },
      ),
      FUZZ_PARAMETERS,
    );
  });

  it('should answer arbitrary paths under any method with 401, 404 or 405 and the error body', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        fc.constantFrom(...PREFIXES),
        fc.oneof(pathParam, anyString.map(percentEncode)),
        fc.constantFrom(CALLER_TOKEN, ADMIN_TOKEN, null, 'not-a-token'),
        async (method, prefix, rest, token) => {
          const request = gatewayRequest(`${prefix}${rest}`, { method, token });
          const answer = await fuzzFetch(request, { allowed5xx: UPSTREAM_5XX });
          tally.record('arbitrary paths and methods', answer.status);
          // A HEAD answer has no body to check; everything else is an error or a route's answer.
          expect(answer.status, `${method} ${request.url}`).not.toBe(500);
        },
      ),
      FUZZ_PARAMETERS,
    );
  });
});
