/**
 * Fuzzing the signing proxy's query strings: every proxied list route sent arbitrary
 * names and values, repeated names, percent-encoding, bad escapes (`%FF`, `%E0%A4%A`) and
 * encoded NULs. The gateway refuses a parameter the route does not declare, a repeat and
 * what the route's query schema refuses (400, nothing forwarded) and forwards the rest;
 * never a 500, every error the error body.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ProxyRoute } from '../../../worker/routes/route.ts';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  queryString,
  refusedByGateway,
  routeLabels,
  routeNamed,
  schemaKeys,
  UPSTREAM_5XX,
  useFuzzTally,
} from '../fuzz-helpers.ts';
import { gatewayRequest } from '../helpers.ts';

const tally = useFuzzTally('proxy query strings');
const QUERIED = PROXY_ROUTES.filter((route) => route.query !== undefined);

/** Values the list filters take, valid ones included, beside any string. */
const FILTER_VALUES = fc.constantFrom(
  '1',
  '2',
  '10',
  '100',
  '101',
  '0',
  '-1',
  '01',
  '1e2',
  '1.0',
  '999999999',
  '9999999999',
  'NG',
  'ng',
  'GH',
  'success',
  'pending',
  'failed',
  'processing',
  'card',
  'ada@example.com',
  '2025-01-01',
  '2025-02-30',
  '2025-01-01T00:00:00Z',
  '2025-01-01T25:00:00Z',
  '2030-12-31',
  'ref-1',
);

/**
 * Whether the gateway should forward the query string `search` (with its `?`) to `route`:
 * only parameters the schema declares, each once, with values it accepts.
 */
function acceptedQuery(route: ProxyRoute, search: string): boolean {
  const declared = new Set(schemaKeys(route.query));
  const values = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(search)) {
    if (values.has(name) || !declared.has(name)) return false;
    values.set(name, value);
  }
  return v.is(route.query as v.GenericSchema, Object.fromEntries(values));
}

describe('fuzz: proxy query strings', () => {
  it('should refuse what the query schema refuses, forward the rest, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const cases = routeLabels(QUERIED).chain((label) =>
      fc.tuple(
        fc.constant(label),
        queryString(schemaKeys(routeNamed(QUERIED, label).query), FILTER_VALUES),
      ),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ([label, query]) => {
        const route = routeNamed(QUERIED, label);
        const request = gatewayRequest(`${route.pattern}?${query}`);
        const search = new URL(request.url).search;
        const answer = await fuzzFetch(request, { allowed5xx: UPSTREAM_5XX });
        tally.record('query strings', answer.status);
        const why = `${label} ${search} ${answer.status} ${JSON.stringify(answer.json)}`;
        if (acceptedQuery(route, search)) {
          expect(refusedByGateway(answer), why).toBe(false);
        } else {
          expect({ refused: refusedByGateway(answer), status: answer.status }, why).toEqual({
            refused: true,
            status: 400,
          });
        }
      }),
      FUZZ_PARAMETERS,
    );
  });
});
