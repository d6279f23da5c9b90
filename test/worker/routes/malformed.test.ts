/**
 * Property-based malformed input: random JSON, random bytes,
 * random content types and random query strings, sent to random routes of the real
 * Worker. The gateway answers a 4xx itself, or forwards what the route's schema accepts
 * (and the sandbox answers 2xx/4xx); never a 5xx, and every error is an error body
 * `{ status: 'error', message, code, issues?, request_id }`.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProxyRoute } from '../../../worker/routes/route.ts';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  captureLogs,
  fetchGateway,
  gatewayRequest,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';

const RUNS = { numRuns: 100 } as const;
const WRITES = PROXY_ROUTES.filter((route) => route.method !== 'GET');
const QUERIED = PROXY_ROUTES.filter((route) => route.query !== undefined);
const GATEWAY_REFUSALS = ['validation_failed', 'payload_too_large', 'unsupported_media_type'];

/** A random route of `routes`, shown by name in counterexamples. */
const anyOf = (routes: readonly ProxyRoute[]) =>
  fc.constantFrom(...routes.map((route) => route.name)).map(
    (name) => routes.find((route) => route.name === name) as ProxyRoute,
    (route) => (route as ProxyRoute).name,
  );

/** A concrete path for a route pattern. */
const concrete = (route: ProxyRoute) =>
  route.pattern.replace(/:(\w+)/g, () => `ref-${crypto.randomUUID()}`);

const contentTypes = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/problem+json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
  ),
  fc.string({ maxLength: 40 }).filter((text) => /^[\x20-\x7e]*$/.test(text)),
);

/** Keys of a valibot object schema, piped or not. */
function keysOf(schema: v.GenericSchema | undefined): string[] {
  return schema !== undefined && 'entries' in schema ? Object.keys(schema.entries as object) : [];
}

/** An object built from the route's own keys (and one stranger) with random JSON values. */
const nearlyValid = (route: ProxyRoute) =>
  fc.dictionary(fc.constantFrom(...keysOf(route.body?.schema), 'unexpected'), fc.jsonValue(), {
    maxKeys: 10,
  });

interface Outcome {
  status: number;
  code: string | undefined;
  issues: { path: string; message: string }[] | undefined;
  /** How many requests reached the sandbox under the request id. */
  reached: number;
  /**
   * Whether the gateway let the request through validation: it reached the sandbox, or
   * was answered with a success without it (a cache hit on `GET /banks`).
   */
  passed: boolean;
}

/**
 * Sends `request`, asserts the response is never a 5xx and every error is an error
 * body carrying the response's request id, and counts what reached the sandbox.
 */
async function send(request: Request, requestId: string, env: Partial<Env> = {}): Promise<Outcome> {
  const response = await fetchGateway(request, env);
  const text = await response.text();
  expect(response.status, text).toBeLessThan(500);
  expect(response.headers.get('X-Request-Id')).toBe(requestId);
  const reached = (await sandboxRequests(requestId)).length;
  if (response.status < 400) {
    return { status: response.status, code: undefined, issues: undefined, reached, passed: true };
  }
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toMatchObject({ status: 'error', request_id: requestId });
  expect(body.message).toEqual(expect.stringMatching(/\S/));
  expect(body.code).toEqual(expect.stringMatching(/^[a-z][a-z0-9_]*$/));
  const issues = body.issues as Outcome['issues'];
  if (issues !== undefined) {
    expect(issues.length).toBeGreaterThan(0);
    for (const issue of issues) {
      expect(issue).toEqual({ path: expect.any(String), message: expect.stringMatching(/\S/) });
    }
  }
  const passed = reached > 0;
  // What the gateway refuses itself never reaches the sandbox.
  if (!passed) expect(GATEWAY_REFUSALS).toContain(body.code);
  return { status: response.status, code: body.code as string, issues, reached, passed };
}

/** A write to `route` with a fresh Idempotency-Key. */
function write(route: ProxyRoute, body: BodyInit, type: string | undefined, id: string): Request {
  const headers = new Headers({ 'Idempotency-Key': crypto.randomUUID() });
  if (type !== undefined) headers.set('Content-Type', type);
  return gatewayRequest(concrete(route), { method: route.method, requestId: id, headers, body });
}

/** Whether the gateway should let `sent` through to the route's upstream. */
function acceptable(route: ProxyRoute, sent: unknown): boolean {
  if (route.body !== undefined) return v.is(route.body.schema, sent);
  return (
    typeof sent === 'object' &&
    sent !== null &&
    !Array.isArray(sent) &&
    Object.keys(sent).length === 0
  );
}

beforeEach(() => {
  captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('malformed input', { timeout: 120_000 }, () => {
  describe('random JSON bodies', () => {
    it('should forward only what the route schema accepts and answer 400 otherwise', async () => {
      await fc.assert(
        fc.asyncProperty(anyOf(WRITES), fc.jsonValue(), async (route, value) => {
          const id = uniqueRequestId();
          const outcome = await send(
            write(route, JSON.stringify(value), 'application/json', id),
            id,
          );
          if (acceptable(route, value)) {
            expect(outcome.reached, route.name).toBe(1);
          } else {
            expect(outcome, route.name).toMatchObject({
              status: 400,
              code: 'validation_failed',
              reached: 0,
            });
          }
        }),
        RUNS,
      );
    });

    it('should list issues only at the root or under the schema keys', async () => {
      const routes = WRITES.filter((route) => route.body !== undefined);
      const cases = anyOf(routes).chain((route) =>
        fc.tuple(fc.constant(route), nearlyValid(route)),
      );
      await fc.assert(
        fc.asyncProperty(cases, async ([route, value]) => {
          const id = uniqueRequestId();
          const outcome = await send(
            write(route, JSON.stringify(value), 'application/json', id),
            id,
          );
          if (acceptable(route, value)) return expect(outcome.passed).toBe(true);
          expect(outcome).toMatchObject({ status: 400, code: 'validation_failed', passed: false });
          const roots = new Set(['', ...keysOf(route.body?.schema)]);
          for (const issue of outcome.issues ?? []) {
            expect(roots.has(issue.path.split('.')[0] ?? ''), issue.path).toBe(true);
          }
        }),
        RUNS,
      );
    });
  });

  describe('random bytes and content types', () => {
    it('should answer 4xx to random bytes under any content type', async () => {
      await fc.assert(
        fc.asyncProperty(
          anyOf(WRITES),
          fc.uint8Array({ maxLength: 600 }),
          fc.option(contentTypes, { nil: undefined }),
          async (route, bytes, type) => {
            const id = uniqueRequestId();
            const outcome = await send(write(route, bytes, type, id), id);
            if (!outcome.passed) {
              expect(outcome.status).toBeGreaterThanOrEqual(400);
            } else if (bytes.byteLength === 0) {
              expect(route.body, route.name).toBeUndefined();
            } else {
              const sent: unknown = JSON.parse(new TextDecoder().decode(bytes));
              expect(acceptable(route, sent), route.name).toBe(true);
            }
          },
        ),
        RUNS,
      );
    });

    it('should answer 413 exactly when the body is over MAX_BODY_BYTES', async () => {
      await fc.assert(
        fc.asyncProperty(anyOf(WRITES), fc.uint8Array({ maxLength: 512 }), async (route, bytes) => {
          const id = uniqueRequestId();
          const outcome = await send(write(route, bytes, 'application/json', id), id, {
            MAX_BODY_BYTES: '256',
          });
          expect(outcome.code === 'payload_too_large', `${bytes.byteLength} bytes`).toBe(
            bytes.byteLength > 256,
          );
        }),
        RUNS,
      );
    });
  });

  describe('random query strings', () => {
    it('should answer 400 or forward only declared parameters, with issues under the names sent', async () => {
      const pairs = (route: ProxyRoute) =>
        fc.array(
          fc.tuple(fc.constantFrom(...keysOf(route.query), 'other'), fc.string({ maxLength: 30 })),
          {
            maxLength: 6,
          },
        );
      const cases = anyOf(QUERIED).chain((route) => fc.tuple(fc.constant(route), pairs(route)));
      await fc.assert(
        fc.asyncProperty(cases, async ([route, entries]) => {
          const id = uniqueRequestId();
          const query = new URLSearchParams(entries).toString();
          const outcome = await send(
            gatewayRequest(`${concrete(route)}?${query}`, { requestId: id }),
            id,
          );
          const declared = keysOf(route.query);
          const names = entries.map(([name]) => name);
          if (outcome.passed) {
            expect(new Set(names).size, query).toBe(names.length);
            expect(
              names.every((name) => declared.includes(name)),
              query,
            ).toBe(true);
            expect(
              v.is(route.query as v.GenericSchema, Object.fromEntries([...entries].reverse())),
              query,
            ).toBe(true);
            return;
          }
          expect(outcome).toMatchObject({ status: 400, code: 'validation_failed', passed: false });
          for (const issue of outcome.issues ?? []) {
            expect(names.includes(issue.path), issue.path).toBe(true);
          }
        }),
        RUNS,
      );
    });

    it('should never fail on a raw random query string', async () => {
      await fc.assert(
        fc.asyncProperty(
          anyOf(QUERIED),
          fc.string({ unit: 'binary', maxLength: 60 }),
          async (route, raw) => {
            const id = uniqueRequestId();
            const outcome = await send(
              gatewayRequest(`${concrete(route)}?${raw.replace(/#/g, '%23')}`, { requestId: id }),
              id,
            );
            expect(outcome.passed || outcome.code === 'validation_failed', raw).toBe(true);
          },
        ),
        RUNS,
      );
    });
  });
});
