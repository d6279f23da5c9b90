/**
 * Fuzzing request headers: `Authorization` (schemes, spacing, case, other namespaces'
 * tokens), `Idempotency-Key` (bare, RFC 8941 sf-strings with escapes,
 * empty, over 255 characters, tabs), `X-Request-Id` and `Content-Type`, on proxied,
 * admin and open routes. Never a 500; every error is the error body; the request id is
 * echoed exactly when it is 1 to 128 visible ASCII characters; a request is
 * authenticated exactly when it carries its namespace's token.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  UPSTREAM_5XX,
  useFuzzTally,
  validBody,
} from '../fuzz-helpers.ts';
import { CALLER_TOKEN, GATEWAY_ORIGIN, UUID } from '../helpers.ts';
import { privateLimiter } from '../rate-limit/limiter-bindings.ts';
import { ADMIN_TOKEN } from './admin/admin-helpers.ts';

const tally = useFuzzTally('headers');

/** A request target: path, method, body, and the token its namespace takes. */
interface Target {
  readonly method: string;
  readonly path: string;
  readonly token: string | null;
  /** Whether the body is one the route accepts, so the key is read next. */
  readonly validBody: boolean;
  readonly keyRequired: boolean;
  readonly body?: string;
}

const route = (pattern: string) => {
  const found = PROXY_ROUTES.find((candidate) => candidate.pattern === pattern);
  if (found === undefined) throw new Error(`no route ${pattern}`);
  return found;
};

const TARGETS: fc.Arbitrary<Target> = fc.oneof(
  validBody(route('/banks/resolve')).map((body) => ({
    method: 'POST',
    path: '/banks/resolve',
    token: CALLER_TOKEN,
    validBody: true,
    keyRequired: false,
    // One account, so the resolution cache answers after the first case.
    body: JSON.stringify({ ...body, bank: '058', account: '0123456789' }),
  })),
  validBody(route('/payments/initialize')).map((body) => ({
    method: 'POST',
    path: '/payments/initialize',
    token: CALLER_TOKEN,
    validBody: true,
    keyRequired: true,
    body: JSON.stringify(body),
  })),
  fc.constant({
    method: 'POST',
    path: '/disbursements/initialize',
    token: CALLER_TOKEN,
    validBody: false,
    keyRequired: true,
    body: '{"amount":"x"}',
  }),
  fc.constant({
    method: 'GET',
    path: '/banks?country_code=NG',
    token: CALLER_TOKEN,
    validBody: false,
    keyRequired: false,
  }),
  fc.constant({
    method: 'GET',
    path: '/admin/deliveries/counts',
    token: ADMIN_TOKEN,
    validBody: false,
    keyRequired: false,
  }),
  fc.constant({
    method: 'GET',
    path: '/healthz',
    token: null,
    validBody: false,
    keyRequired: false,
  }),
);

// Tab, space and visible ASCII: workerd re-encodes other characters as UTF-8 (with a
// warning per request), so what arrives would not be what was generated.
const headerChar = fc
  .oneof(
    { weight: 9, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
    { weight: 1, arbitrary: fc.constant(0x09) },
  )
  .map((code) => String.fromCharCode(code));
const headerValue = (maxLength: number) => fc.string({ unit: headerChar, maxLength });
const visible = (min: number, max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
    minLength: min,
    maxLength: max,
  });

const AUTHORIZATION = (token: string | null) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constant(`Bearer ${token ?? CALLER_TOKEN}`) },
    fc.constantFrom(
      `Bearer ${token ?? CALLER_TOKEN}`,
      `bearer ${token ?? CALLER_TOKEN}`,
      `BEARER   ${token ?? CALLER_TOKEN}`,
      `Bearer ${token ?? CALLER_TOKEN} `,
      ` Bearer ${token ?? CALLER_TOKEN}`,
      `Bearer\t${token ?? CALLER_TOKEN}`,
      `Bearer ${token ?? CALLER_TOKEN} extra`,
      `Bearer ${token ?? CALLER_TOKEN}x`,
      `Bearer ${(token ?? CALLER_TOKEN).toUpperCase()}`,
      `Bearer ${CALLER_TOKEN}`,
      `Bearer ${ADMIN_TOKEN}`,
      `Basic ${btoa(`user:${token ?? CALLER_TOKEN}`)}`,
      'Bearer',
      'Bearer ',
      '',
      'Bearer sandbox-secret',
    ),
    headerValue(80),
    headerValue(80).map((value) => `Bearer ${value}`),
  );

const IDEMPOTENCY_KEY = fc.oneof(
  fc.uuid(),
  visible(1, 255),
  visible(256, 300),
  headerValue(60),
  headerValue(40).map((value) => `"${value}"`),
  visible(1, 40).map((value) => `"${value.replace(/["\\]/g, '\\$&')}"`),
  fc.constantFrom(
    '""',
    '"',
    '"\\"',
    '"a\\"b"',
    '"a\\\\b"',
    '"a\\b"',
    ' ',
    'a b',
    `"${'k'.repeat(255)}"`,
    'k'.repeat(255),
  ),
);

const REQUEST_ID = fc.oneof(
  visible(1, 140),
  headerValue(140),
  fc.constantFrom('', ' ', 'a b', 'x'.repeat(128), 'x'.repeat(129)),
);

const CONTENT_TYPE = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/json; charset=utf-16',
  '',
);

// An sf-string (RFC 8941) as the gateway reads Idempotency-Key, and what it must hold.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/;

/** Whether the gateway should accept `raw` (as `Headers` keeps it) as an Idempotency-Key. */
function validKey(raw: string): boolean {
  const key = SF_STRING.exec(raw)?.[1]?.replace(/\\(["\\])/g, '$1') ?? raw;
  return key.length <= 255 && /^[\x20-\x7e]+$/.test(key);
}

describe('fuzz: headers', () => {
  it('should authenticate, echo request ids and read idempotency keys by the rules, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const cases = TARGETS.chain((target) =>
      fc.record({
        target: fc.constant(target),
        authorization: fc.option(AUTHORIZATION(target.token), { nil: undefined }),
        key: fc.option(IDEMPOTENCY_KEY, { nil: undefined }),
        requestId: fc.option(REQUEST_ID, { nil: undefined }),
        contentType: fc.option(CONTENT_TYPE, { freq: 4, nil: 'application/json' }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ target, authorization, key, requestId, contentType }) => {
        // An address and limiter objects of its own: failed admin sign-ins are throttled
        // per address and across the gateway (429), which test/worker/auth covers; here
        // every case is judged on its headers alone.
        const headers = new Headers({ 'CF-Connecting-IP': `fuzz-${crypto.randomUUID()}` });
        if (authorization !== undefined) headers.set('Authorization', authorization);
        if (key !== undefined) headers.set('Idempotency-Key', key);
        if (requestId !== undefined) headers.set('X-Request-Id', requestId);
        if (target.body !== undefined) headers.set('Content-Type', contentType);
        const request = new Request(`${GATEWAY_ORIGIN}${target.path}`, {
          method: target.method,
          headers,
          ...(target.body === undefined ? {} : { body: target.body }),
        });
        const answer = await fuzzFetch(request, {
          allowed5xx: UPSTREAM_5XX,
          env: { RATE_LIMITER: privateLimiter() },
        });
        tally.record('Authorization, Idempotency-Key, X-Request-Id, Content-Type', answer.status);
        const why = `${target.method} ${target.path} ${JSON.stringify([...headers])} ${answer.status} ${JSON.stringify(answer.json)}`;

        const sentId = headers.get('X-Request-Id');
        if (sentId !== null && /^[\x21-\x7e]{1,128}$/.test(sentId)) {
          expect(answer.requestId, why).toBe(sentId);
        } else {
          expect(answer.requestId, why).toMatch(UUID);
        }

        const bearer = /^Bearer +([\x21-\x7E]+)$/i.exec(headers.get('Authorization') ?? '')?.[1];
        const authenticated = target.token === null || bearer === target.token;
        expect(answer.status === 401, why).toBe(!authenticated);
        if (!authenticated) expect(answer.json?.code, why).toBe('unauthorized');

        const sentKey = headers.get('Idempotency-Key');
        const keyIssue = (answer.json?.issues as { path: string }[] | undefined)?.some(
          (issue) => issue.path === 'Idempotency-Key',
        );
        if (keyIssue) expect(sentKey !== null && !validKey(sentKey), why).toBe(true);
        const jsonBody = contentType.startsWith('application/json') && !contentType.includes('16');
        if (!authenticated || !target.validBody || !jsonBody) return;
        if (sentKey === null && target.keyRequired) {
          expect(answer.json?.code, why).toBe('idempotency_key_missing');
        } else if (sentKey !== null && !validKey(sentKey)) {
          expect({ status: answer.status, keyIssue }, why).toEqual({ status: 400, keyIssue: true });
        }
      }),
      FUZZ_PARAMETERS,
    );
  });
});
