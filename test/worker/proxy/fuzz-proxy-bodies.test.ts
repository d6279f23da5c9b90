/**
 * Fuzzing the signing proxy's request bodies: every proxied POST and PATCH, sent
 * arbitrary JSON, valid bodies changed by mutations (wrong types, huge numbers, negative
 * zero, exponents, Unicode, missing and extra fields), and arbitrary bytes under any
 * content type. The gateway refuses what the route's schema refuses (400, 413, 415, never
 * reaching the upstream) and forwards the rest; never a 500, every error the error body.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProxyRoute } from '../../../worker/routes/route.ts';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  acceptedBody,
  anyJsonText,
  BODY_ROUTES,
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  nearlyValidBody,
  refusedByGateway,
  routeLabels,
  routeNamed,
  UPSTREAM_5XX,
  useFuzzTally,
} from '../fuzz-helpers.ts';
import { gatewayRequest } from '../helpers.ts';

const tally = useFuzzTally('proxy bodies');
const WRITES = PROXY_ROUTES.filter((route) => route.method !== 'GET');
const JSON_TYPE = 'application/json';
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const CONTENT_TYPES = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'APPLICATION/JSON',
    'application/json; charset="utf-8"',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/problem+json',
    'application/vnd.api+json',
    'application/json5',
    'application/x-json',
    'text/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json, text/plain',
    '*/*',
    '',
  ),
  fc.string({ maxLength: 40 }).filter((text) => /^[\x20-\x7e]*$/.test(text)),
);

/** A write to `route` (its parameters filled with an unknown reference) with a fresh key. */
function write(route: ProxyRoute, body: BodyInit, contentType: string | undefined): Request {
  const headers = new Headers({ 'Idempotency-Key': crypto.randomUUID() });
  if (contentType !== undefined) headers.set('Content-Type', contentType);
  const path = route.pattern.replace(/:\w+/g, 'fuzz-unknown-ref');
  return gatewayRequest(path, { method: route.method, headers, body });
}

/** Whether the gateway should forward `text` (sent as JSON) to `route`. */
function forwardable(route: ProxyRoute, text: string): boolean {
  if (route.body !== undefined) return acceptedBody(route, text);
  // A body-less route takes nothing or an empty object.
  if (text === '') return true;
  try {
    const value: unknown = JSON.parse(text);
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.keys(value).length === 0
    );
  } catch {
    return false;
  }
}

/** Sends `text` to `route` and checks the refusal or the forwarding it deserves. */
async function expectJudged(property: string, route: ProxyRoute, text: string, type?: string) {
  const answer = await fuzzFetch(write(route, text, type), { allowed5xx: UPSTREAM_5XX });
  tally.record(property, answer.status);
  const why = `${route.method} ${route.pattern} ${answer.status} ${JSON.stringify(answer.json)}`;
  if (forwardable(route, text)) {
    expect(refusedByGateway(answer), why).toBe(false);
  } else {
    expect(refusedByGateway(answer), why).toBe(true);
    expect(answer.status, why).toBe(400);
  }
}

describe('fuzz: proxy bodies', () => {
  it('should refuse arbitrary JSON the route schema refuses, forward the rest, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(routeLabels(WRITES), anyJsonText, async (label, text) => {
        await expectJudged('arbitrary JSON', routeNamed(WRITES, label), text, JSON_TYPE);
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should judge mutated valid bodies by the route schema, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const cases = routeLabels(BODY_ROUTES).chain((label) =>
      fc.tuple(fc.constant(label), nearlyValidBody(routeNamed(BODY_ROUTES, label))),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ([label, text]) => {
        await expectJudged('mutated valid bodies', routeNamed(BODY_ROUTES, label), text, JSON_TYPE);
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should answer arbitrary bytes under any content type with a refusal or a forward, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 600 }),
      anyJsonText.map((text) => new TextEncoder().encode(text)),
    );
    await fc.assert(
      fc.asyncProperty(
        routeLabels(WRITES),
        bytes,
        fc.option(CONTENT_TYPES, { nil: undefined }),
        async (label, body, type) => {
          const route = routeNamed(WRITES, label);
          const answer = await fuzzFetch(write(route, body, type), { allowed5xx: UPSTREAM_5XX });
          tally.record('arbitrary bytes and content types', answer.status);
          if (refusedByGateway(answer)) return;
          // Forwarded: the bytes were UTF-8 JSON the route accepts, or nothing on a body-less route.
          const text = UTF8.decode(body);
          expect(forwardable(route, text), `${label} ${type} ${text}`).toBe(true);
        },
      ),
      FUZZ_PARAMETERS,
    );
  });
});
