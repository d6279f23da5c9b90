// Where a cacheable upstream answer is kept in KV. A key stands for exactly one upstream
// request: the query and body are forwarded as received, so a request is cached only when
// what is forwarded is the one spelling its key is derived from; any other spelling (an
// extra body field, a re-encoded or reordered query) goes to the upstream uncached, and
// can neither read nor write the entry of the plain request.
import type { ValidBody, ValidQuery } from '../proxy/pipeline.ts';
import type { CachePolicy } from '../routes/route.ts';

/** Prefix of every bank-list entry in KV: `banks:v1:<COUNTRY>` or `banks:v1:default`. */
const BANKS_KEY_PREFIX = 'banks:v1:';

/** Prefix of every account-resolution entry in KV: `resolve:v1:<sha-256 hex>`. */
const RESOLVE_KEY_PREFIX = 'resolve:v1:';

/**
 * The KV key of a `GET /banks` answer: `banks:v1:<COUNTRY>` for exactly
 * `?country_code=<COUNTRY>` (one upper-case two-letter code, as the SDK sends it), and
 * `banks:v1:default` for no query at all (the payment service then picks the country: a
 * request of its own, kept apart from an explicit `NG`).
 *
 * @param search - the query string as forwarded, with its `?` (or `''`).
 * @param query - the validated query.
 * @returns the key, or `undefined` (not cacheable) for any other query string.
 */
function banksCacheKey(search: string, query: ValidQuery | undefined): string | undefined {
  if (search === '') return `${BANKS_KEY_PREFIX}default`;
  const country = query?.country_code;
  return typeof country === 'string' &&
    /^[A-Z]{2}$/.test(country) &&
    search === `?country_code=${country}`
    ? `${BANKS_KEY_PREFIX}${country}`
    : undefined;
}

/**
 * The KV key of a `POST /banks/resolve` answer: one entry per (bank, account, currency),
 * as the SHA-256 of the three values, so the account number never appears in a key
 * (keys are listed in dashboards and tooling; the key is never logged either). Only a
 * body that is exactly `{"bank":…,"account":…,"currency":…}` (those members in that
 * order, no other member, no whitespace: what the SDK sends) and no query string is
 * cacheable, so the key determines every byte forwarded.
 *
 * @param search - the query string as forwarded, with its `?` (or `''`).
 * @param body - the validated body (the proxy's validation stage parsed it).
 * @returns the key, or `undefined` (not cacheable) for anything else.
 */
async function resolveKeyOf(
  search: string,
  body: ValidBody | undefined,
): Promise<string | undefined> {
  const { bank, account, currency } = body?.value ?? {};
  if (typeof bank !== 'string' || typeof account !== 'string' || typeof currency !== 'string') {
    return undefined;
  }
  if (search !== '' || body?.text !== JSON.stringify({ bank, account, currency })) {
    return undefined;
  }
  // A separator that cannot occur in the values keeps ("1","23") apart from ("12","3").
  const material = new TextEncoder().encode([bank, account, currency].join('\u0000'));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', material));
  const hex = Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${RESOLVE_KEY_PREFIX}${hex}`;
}

/**
 * The KV key a `POST /banks/resolve` body is cached under, from its bytes: for tools and
 * tests finding where a response went (the proxy keys the body its validation parsed).
 *
 * @param body - the exact request body bytes.
 * @returns the key, or `undefined` (not cacheable) when the body is not exactly the JSON
 *   object `{"bank":…,"account":…,"currency":…}` of three strings.
 *
 * @internal Exported for the tests, which call it directly.
 */
export function resolveCacheKey(body: Uint8Array | undefined): Promise<string | undefined> {
  let text: string;
  let value: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body);
    value = JSON.parse(text);
  } catch {
    return Promise.resolve(undefined);
  }
  if (typeof value !== 'object' || value === null) return Promise.resolve(undefined);
  return resolveKeyOf('', { text, value: value as ValidBody['value'] });
}

/**
 * The KV key of a cacheable request, by the route's cache policy.
 *
 * @param policy - `banks` or `resolve` (worker/routes/route.ts).
 * @param search - the query string as forwarded, with its `?` (or `''`).
 * @param query - the validated query.
 * @param body - the validated request body.
 * @returns the key, or `undefined` when this request is not cacheable: its forwarded
 *   query or body is not the one spelling the key stands for.
 */
export function cacheKeyFor(
  policy: CachePolicy,
  search: string,
  query: ValidQuery | undefined,
  body: ValidBody | undefined,
): Promise<string | undefined> {
  return policy === 'banks'
    ? Promise.resolve(banksCacheKey(search, query))
    : resolveKeyOf(search, body);
}
