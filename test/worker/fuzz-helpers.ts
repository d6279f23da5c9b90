/**
 * Helpers of the fuzz tests (the fuzz-*.test.ts files under test/worker): the case count from the
 * `FUZZ_RUNS` binding, a tally of cases and statuses per property printed once per file,
 * the property every response must keep (no 500, only documented 5xx, the error body shape,
 * no unexpected error logged), and the fast-check arbitraries the files share: hostile
 * strings, JSON documents, valid request bodies per proxied route and their mutations,
 * path segments and query strings.
 */

import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import * as v from 'valibot';
import { afterAll, afterEach, expect, inject, vi } from 'vitest';
import type { ProxyRoute } from '../../worker/routes/route.ts';
import { PROXY_ROUTES } from '../../worker/routes/table.ts';
import { fuzzRuns } from '../projects.ts';
import { captureLogs, fetchGateway } from './helpers.ts';

/**
 * Generated cases per property: the `FUZZ_RUNS` binding of vitest.config.ts (200 in
 * `npm test`, 10,000 in `npm run test:all`).
 */
const FUZZ_RUNS = fuzzRuns(env.FUZZ_RUNS);

/**
 * How much slower a case may run than on a core of its own: the worker project runs three
 * files at a time on two cores, most of them property tests in the full tier.
 */
const SHARED_CORE_FACTOR = 3;

/**
 * A test timeout that fits {@link FUZZ_RUNS} cases on a shared core.
 *
 * @param msPerCase - a generous upper bound of one case on a core of its own, in milliseconds.
 * @returns the timeout in milliseconds: 30 s plus `msPerCase` per case, times
 *   {@link SHARED_CORE_FACTOR}.
 */
export function fuzzTimeout(msPerCase: number): number {
  return 30_000 + FUZZ_RUNS * msPerCase * SHARED_CORE_FACTOR;
}

/** `fc.assert` parameters: {@link FUZZ_RUNS} cases, a random seed (printed on failure). */
export const FUZZ_PARAMETERS = { numRuns: FUZZ_RUNS } as const;

/** The statuses the documented upstream failures may answer (docs/gateway.md). */
export const UPSTREAM_5XX: readonly number[] = [502, 503, 504];

/** Counts of one property: cases run, and how many answered each status. */
interface PropertyTally {
  cases: number;
  statuses: Record<number, number>;
}

/** Records the cases of the properties of one fuzz file. */
export interface FuzzTally {
  /**
   * Counts one case of `property` answered with `status`.
   *
   * @param property - the property's short name, e.g. `arbitrary JSON`.
   * @param status - the status the gateway answered.
   */
  record(property: string, status: number): void;
}

/**
 * A tally of the calling file's fuzz cases, printed once after the file as one line per
 * property: `fuzz <entry point> / <property>: <n> cases, statuses {...}`. It also
 * restores the console after every test (the cases capture the gateway's logs).
 *
 * @param entryPoint - the entry point the file fuzzes, e.g. `POST /webhooks`.
 * @returns the tally to record cases in.
 */
export function useFuzzTally(entryPoint: string): FuzzTally {
  const properties = new Map<string, PropertyTally>();
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(() => {
    for (const [property, { cases, statuses }] of properties) {
      console.log(
        `fuzz ${entryPoint} / ${property}: ${cases} cases, statuses ${JSON.stringify(statuses)}`,
      );
    }
  });
  return {
    record(property, status) {
      const tally = properties.get(property) ?? { cases: 0, statuses: {} };
      tally.cases += 1;
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      properties.set(property, tally);
    },
  };
}

/** A response that kept the property of {@link fuzzFetch}. */
export interface FuzzAnswer {
  readonly status: number;
  /** The parsed JSON body; `undefined` for an empty or non-JSON success body. */
  readonly json: Record<string, unknown> | undefined;
  /** The response's `X-Request-Id`. */
  readonly requestId: string;
}

/** Options of {@link fuzzFetch}. */
export interface FuzzFetchOptions {
  /** Bindings to override for this request. */
  readonly env?: Partial<Env>;
  /** 5xx statuses this case may answer: the documented upstream failures. @default none */
  readonly allowed5xx?: readonly number[];
}

const ERROR_BODY_KEYS = new Set(['status', 'message', 'code', 'issues', 'request_id', 'upstream']);

/**
 * Sends `request` to the real Worker and asserts the property every fuzz case keeps: never
 * a 500, a 5xx only when `allowed5xx` lists it, an `X-Request-Id` on the response, every
 * 4xx/5xx the error body `{ status: 'error', message, code, issues?, request_id,
 * upstream? }` carrying that id, and no `unexpected_error` among the log lines (each of
 * which must be JSON).
 *
 * @param request - the request.
 * @param options - overridden bindings and the 5xx statuses allowed.
 * @returns the status, the parsed body and the request id.
 */
export async function fuzzFetch(
  request: Request,
  options: FuzzFetchOptions = {},
): Promise<FuzzAnswer> {
  const logs = captureLogs();
  // The fuzz tests' own sandbox: thousands of transfers would drain the shared one.
  const response = await fetchGateway(request, {
    UPSTREAM_BASE_URL: inject('fuzzSandboxUrl'),
    ...options.env,
  });
  const text = await response.text();
  const what = `${request.method} ${request.url} answered ${response.status}: ${text.slice(0, 500)}`;
  expect(response.status, what).not.toBe(500);
  if (response.status >= 500) expect(options.allowed5xx ?? [], what).toContain(response.status);
  const unexpected = logs.lines().filter((line) => line.event === 'unexpected_error');
  expect(unexpected, what).toEqual([]);
  const requestId = response.headers.get('X-Request-Id') ?? '';
  expect(requestId, what).toMatch(/^[\x21-\x7e]{1,128}$/);
  const json = parseObject(text);
  if (response.status >= 400) {
    expect(json, what).toBeDefined();
    expectErrorBody(json ?? {}, requestId, what);
  }
  return { status: response.status, json, requestId };
}

/**
 * Asserts the error body shape of docs/gateway.md ("Error body").
 *
 * @param body - the parsed body.
 * @param requestId - the response's `X-Request-Id`.
 * @param what - names the case in failure messages.
 */
function expectErrorBody(body: Record<string, unknown>, requestId: string, what = ''): void {
  expect(body.status, what).toBe('error');
  expect(body.message, what).toEqual(expect.stringMatching(/\S/));
  expect(body.code, what).toEqual(expect.stringMatching(/^[a-z][a-z0-9_]*$/));
  expect(body.request_id, what).toBe(requestId);
  for (const key of Object.keys(body))
    expect(ERROR_BODY_KEYS.has(key), `${key}: ${what}`).toBe(true);
  if (body.issues === undefined) return;
  expect(Array.isArray(body.issues) && body.issues.length > 0, what).toBe(true);
  for (const issue of body.issues as unknown[]) {
    expect(issue, what).toEqual({ path: expect.any(String), message: expect.stringMatching(/\S/) });
  }
}

/** The error codes the gateway answers itself when it refuses a body or a query string. */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'validation_failed',
  'unsupported_media_type',
  'payload_too_large',
]);

/**
 * Whether a response is the gateway's own refusal of the input (a 400, 413 or 415 it
 * answered without the upstream), as opposed to a success or an upstream error.
 *
 * @param answer - a checked answer.
 */
export function refusedByGateway(answer: FuzzAnswer): boolean {
  const code = answer.json?.code;
  return (
    answer.status >= 400 &&
    typeof code === 'string' &&
    REFUSAL_CODES.has(code) &&
    answer.json?.upstream === undefined
  );
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A route of the table as counterexamples name it: `METHOD pattern`. */
const routeLabel = (route: { method: string; pattern: string }) =>
  `${route.method} ${route.pattern}`;

/**
 * A route of `routes`, generated as its {@link routeLabel} so that counterexamples stay
 * readable; look it up with {@link routeNamed}.
 *
 * @param routes - the choices (at least one).
 */
export function routeLabels(routes: readonly { method: string; pattern: string }[]) {
  return fc.constantFrom(...routes.map(routeLabel));
}

/**
 * The route of `routes` with `label`.
 *
 * @throws {Error} when none has it.
 */
export function routeNamed<R extends { method: string; pattern: string }>(
  routes: readonly R[],
  label: string,
): R {
  const route = routes.find((candidate) => routeLabel(candidate) === label);
  if (route === undefined) throw new Error(`no route ${label}`);
  return route;
}

// Strings --------------------------------------------------------------------------------

/** Strings the parsers of this gateway have reasons to trip on. */
const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\0',
  '\u007f',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  'e\u0301',
  'İ',
  'ß',
  '\u202e',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  '-0',
  '0',
  '1e3',
  '1E+400',
  '-1e-400',
  '0x10',
  '0o7',
  '1_000',
  'Infinity',
  '-Infinity',
  'NaN',
  ' 5',
  '5 ',
  '5.',
  '.5',
  '5.001',
  '9'.repeat(30),
  '%',
  '%00',
  '%FF',
  '%2F',
  '../',
  '..',
  '.',
  '\\',
  '"',
  "'",
  '<script>',
  "' OR 1=1 --",
  '$'.concat('{x}'),
  'a'.repeat(256),
  'a'.repeat(5000),
];

/** Any string: nasty constants, full Unicode, lone surrogates, control characters, long runs. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      maxLength: 20,
    }),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 12_000 }).map((n) => 'x'.repeat(n)) },
);

/** Numeric JSON literals, as raw text: huge, tiny, negative zero, exponents, many digits. */
export const numberLiteral: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '-0',
    '-0.0',
    '0e0',
    '1e309',
    '-1e309',
    '1e-400',
    '1E2',
    '1e+2',
    '5000.50',
    '5000.505',
    '0.01',
    '0.001',
    '999999999999.99',
    '1000000000000',
    '9007199254740993',
    '123456789012345678901234567890',
    '1.7976931348623157e308',
    '5e-324',
  ),
  fc.double().filter(Number.isFinite).map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc
    .tuple(fc.integer({ min: -9999, max: 9999 }), fc.integer({ min: -999, max: 999 }))
    .map(([mantissa, exponent]) => `${mantissa}e${exponent}`),
);

/** Any JSON value, strings from {@link anyString}, nested up to 6 deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double().filter(Number.isFinite),
    anyString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** Deeply nested JSON text (up to 10000 levels of arrays or objects), within 64 KiB. */
const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 50, max: 10_000 }), fc.boolean())
  .map(([depth, objects]) =>
    objects
      ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
      : `${'['.repeat(depth)}${']'.repeat(depth)}`,
  );

/**
 * A JSON document as text: any JSON value, deeply nested text, or an object holding a raw
 * numeric literal (which `JSON.stringify` cannot write).
 */
export const anyJsonText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: anyJson.map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: deepJsonText },
  { weight: 1, arbitrary: numberLiteral.map((literal) => `{"amount":${literal}}`) },
);

// Valid bodies and their mutations ------------------------------------------------------

const printable = (min: number, max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: min,
    maxLength: max,
  });
const reference = printable(1, 60).filter((text) => text !== '.' && text !== '..');
const email = fc.constantFrom('ada@example.com', 'grace.hopper@example.org', 'a+b@example.ng');
const amount = fc.oneof(
  fc.integer({ min: 1, max: 1_000_000 }),
  fc.integer({ min: 1, max: 99_999_999 }).map((minor) => (minor / 100).toFixed(2)),
);
const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const day = (offset: number) =>
  new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/**
 * Valid values of every field of the body of each proxied route with a body (by
 * pattern); which fields are required is read from the route's schema.
 */
const VALID_FIELDS: Readonly<Record<string, Record<string, fc.Arbitrary<unknown>>>> = {
  '/payments/initialize': {
    email,
    amount,
    currency: fc.constant('NGN'),
    reference,
    metadata: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    merchant_bears_fees: fc.boolean(),
  },
  '/disbursements/initialize': {
    customer_name: fc.constantFrom('Ada Obi', 'Grace Hopper'),
    customer_email: email,
    reference,
    amount,
    currency: fc.constant('NGN'),
    destination_bank_code: digits(3, 6),
    destination_bank_account: digits(6, 20),
    narration: fc.constantFrom('Payout', 'Refund of order 1'),
  },
  '/refunds/initialize': {
    payment_reference: reference,
    refund_reference: reference,
    currency: fc.constant('NGN'),
    amount,
    reason: fc.constant('Customer request'),
    account_number: digits(6, 20),
    bank_code: digits(3, 6),
  },
  '/banks/resolve': {
    bank: digits(3, 6),
    account: digits(6, 20),
    currency: fc.constant('NGN'),
  },
  '/direct-debits/mandates': {
    customer_name: fc.constant('Ada Obi'),
    customer_email: email,
    account_number: digits(6, 20),
    bank_code: digits(3, 6),
    start_date: fc.constant(day(2)),
    end_date: fc.constant(day(60)),
    monthly_amount: amount,
    monthly_debit_count: fc.integer({ min: 1, max: 1000 }),
  },
  '/direct-debits/mandates/:mandate_reference/validate-activation': {
    mandate_reference: reference,
    param1: fc.constant('otp'),
    value1: digits(4, 6),
    param2: fc.constant('pin'),
    value2: digits(4, 4),
  },
  '/direct-debits/debit': {
    mandate_reference: reference,
    debit_amount: amount,
    narration: fc.constant('Monthly plan'),
    customer_email: email,
    payment_reference: reference,
  },
  '/direct-debits/disburse': {
    reference,
    amount,
    currency: fc.constant('NGN'),
    destination_bank_code: digits(3, 6),
    destination_bank_account: digits(6, 20),
    narration: fc.constant('Sweep'),
  },
  '/virtual-accounts': {
    account_reference: reference,
    customer_name: fc.constant('Ada Obi'),
    customer_email: email,
    currency_code: fc.constant('NGN'),
    bvn: digits(11, 11),
    metadata: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  },
  '/virtual-accounts/email': { email },
};

/** The proxied routes that take a JSON body, each with a valid body arbitrary. */
export const BODY_ROUTES: readonly ProxyRoute[] = PROXY_ROUTES.filter(
  (route) => route.body !== undefined,
);

/**
 * A body the route's schema accepts.
 *
 * @param route - a route of {@link BODY_ROUTES}.
 * @throws {Error} for a route without a body.
 */
export function validBody(route: ProxyRoute): fc.Arbitrary<Record<string, unknown>> {
  const fields = VALID_FIELDS[route.pattern];
  if (fields === undefined) throw new Error(`no valid body for ${routeLabel(route)}`);
  const entries = schemaEntries(route.body?.schema);
  const requiredKeys = Object.keys(fields).filter((key) => entries[key]?.type !== 'optional');
  return fc.record(fields, { requiredKeys });
}

// A mutation of a body object: returns the JSON text it becomes.
type Mutation = (body: Record<string, unknown>) => Record<string, unknown>;

const NUMBER_SENTINEL = '\u0000number\u0000';

/**
 * One change to a body: a field removed, set to another JSON value, to a hostile string or
 * to a raw numeric literal, a field added (`__proto__` and `constructor` included).
 */
const mutation = (keys: readonly string[]): fc.Arbitrary<Mutation> => {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys) },
    { weight: 1, arbitrary: anyString },
  );
  return fc.oneof(
    key.map(
      (k): Mutation =>
        (body) => {
          const { [k]: _removed, ...rest } = body;
          return rest;
        },
    ),
    fc.tuple(key, anyJson).map(
      ([k, value]): Mutation =>
        (body) =>
          withKey(body, k, value),
    ),
    fc.tuple(key, anyString).map(
      ([k, value]): Mutation =>
        (body) =>
          withKey(body, k, value),
    ),
    fc.tuple(key, numberLiteral).map(
      ([k, literal]): Mutation =>
        (body) =>
          withKey(body, k, `${NUMBER_SENTINEL}${literal}`),
    ),
  );
};

// Defined as an own property even for `__proto__`, as JSON.parse would.
function withKey(body: Record<string, unknown>, key: string, value: unknown) {
  const copy = { ...body };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/**
 * The JSON text of a valid body of `route` changed by 0 to 3 mutations (one case in
 * 25 is left as it was, and some mutations keep it valid, so the upstream path is exercised
 * too without dominating the run).
 *
 * @param route - a route of {@link BODY_ROUTES}.
 */
export function nearlyValidBody(route: ProxyRoute): fc.Arbitrary<string> {
  const keys = schemaKeys(route.body?.schema);
  return fc
    .tuple(
      validBody(route),
      fc.oneof(
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 24, arbitrary: fc.array(mutation(keys), { minLength: 1, maxLength: 3 }) },
      ),
    )
    .map(([body, mutations]) => bodyText(mutations.reduce((b, m) => m(b), body)));
}

/**
 * The keys of a valibot object schema, piped or not (`[]` for anything else).
 *
 * @param schema - the schema.
 */
export function schemaKeys(schema: v.GenericSchema | undefined): string[] {
  return Object.keys(schemaEntries(schema));
}

// The entries of a valibot object schema, piped or not ({} for anything else).
function schemaEntries(schema: v.GenericSchema | undefined): Record<string, { type: string }> {
  if (schema === undefined) return {};
  if ('entries' in schema) return schema.entries as Record<string, { type: string }>;
  const pipe = 'pipe' in schema ? (schema.pipe as unknown[]) : [];
  const object = pipe.find(
    (item): item is { entries: Record<string, { type: string }> } =>
      typeof item === 'object' && item !== null && 'entries' in item,
  );
  return object?.entries ?? {};
}

/**
 * JSON text of `body`, with string values written as {@link NUMBER_SENTINEL} + literal
 * replaced by that raw numeric literal.
 */
function bodyText(body: Record<string, unknown>): string {
  return JSON.stringify(body).replace(/"\\u0000number\\u0000([^"]*)"/g, '$1');
}

/**
 * Whether the gateway should let `text` through to the route's upstream: a JSON object
 * the route's schema accepts, with no key repeated.
 *
 * @param route - a proxied route with a body.
 * @param text - the body sent.
 */
export function acceptedBody(route: ProxyRoute, text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return route.body !== undefined && v.is(route.body.schema, parsed);
}

// Paths and query strings ----------------------------------------------------------------

/** Path segment pieces as raw URL text: dot segments, encoded slashes, bad escapes. */
const RAW_PATH_PIECES: readonly string[] = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e',
  '%2F',
  '%2f',
  '%5C',
  '%2F..%2F..%2Fadmin',
  '%00',
  '%FF',
  '%C0%AF',
  '%E0%A4%A',
  '%ED%A0%80',
  '%',
  '%%',
  '%zz',
  '%25',
  '%0A',
  '%0D%0A',
  '%09',
  '%7F',
  '%20',
  '+',
  ';',
  ':',
  '@',
  '!',
  '$',
  '&',
  "'",
  '(',
  '*',
  '=',
  '~',
];

/**
 * Percent-encodes the UTF-8 bytes of `text` except unreserved characters (a lone
 * surrogate becomes U+FFFD, as `TextEncoder` writes it).
 *
 * @param text - any string.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(text)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A `:param` value as raw URL text: hostile pieces, encoded strings and very long runs. */
export const pathParam: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...RAW_PATH_PIECES) },
      { weight: 3, arbitrary: anyString.map(percentEncode) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
      { weight: 1, arbitrary: reference.map(percentEncode) },
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((pieces) => pieces.join(''));

/** Query string pieces as raw URL text: bad escapes, separators, encoded NULs. */
const RAW_QUERY_PIECES: readonly string[] = [
  '%FF',
  '%00',
  '%',
  '%%',
  '%2',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '+',
  '&',
  '&&',
  '=',
  '==',
  ';',
  '%26',
  '%3D',
  '?',
  '[]',
  '[0]',
];

/**
 * A query string (without `?`): `name=value` pairs whose names come from `names` or
 * anywhere, repeated names, values encoded or raw with bad escapes; or any raw text.
 *
 * @param names - the names the route reads.
 * @param values - values worth trying for them (valid ones included).
 */
export function queryString(
  names: readonly string[],
  values: fc.Arbitrary<string>,
): fc.Arbitrary<string> {
  const name = fc.oneof(
    { weight: 4, arbitrary: names.length > 0 ? fc.constantFrom(...names) : anyString },
    { weight: 1, arbitrary: anyString },
  );
  const text = (arb: fc.Arbitrary<string>) =>
    fc.oneof(
      { weight: 3, arbitrary: arb.map(percentEncode) },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.oneof(fc.constantFrom(...RAW_QUERY_PIECES), arb.map(percentEncode)), {
            maxLength: 3,
          })
          .map((p) => p.join('')),
      },
    );
  const pairs = fc
    .array(fc.tuple(text(name), text(fc.oneof(values, anyString))), { maxLength: 6 })
    .map((entries) => entries.map(([k, val]) => `${k}=${val}`).join('&'));
  const raw = fc.string({ unit: 'binary', maxLength: 60 }).map((s) => s.replace(/#/g, '%23'));
  return fc.oneof({ weight: 4, arbitrary: pairs }, { weight: 1, arbitrary: raw });
}
