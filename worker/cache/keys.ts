import type { ValidBody, ValidQuery } from '../proxy/pipeline.ts';
import type { CachePolicy } from '../routes/route.ts';

/** Prefix of every bank-list entry in KV: `banks:v1:<COUNTRY>`. */
const BANKS_KEY_PREFIX = 'banks:v1:';

/** Prefix of every account-resolution entry in KV: `resolve:v1:<sha-256 hex>`. */
const RESOLVE_KEY_PREFIX = 'resolve:v1:';

/**
 * The KV key of a `GET /banks` answer: one entry per country, the validated
 * `country_code` (the query schema fills in `NG` when it is absent, and refuses anything
 * but one upper-case two-letter code).
 *
 * @param query - the validated query.
 * @returns the key, or `undefined` (not cacheable) without a two-letter country.
 */
function banksCacheKey(query: ValidQuery | undefined): string | undefined {
  const country = query?.country_code;
  return typeof country === 'string' && /^[A-Z]{2}$/.test(country)
    ? `${BANKS_KEY_PREFIX}${country}`
    : undefined;
}

/**
 * The KV key of a `POST /banks/resolve` answer: one entry per (bank, account, currency),
 * as the SHA-256 of the three values, so the account number never appears in a key
 * (keys are listed in dashboards and tooling; the key is never logged either).
 *
 * @param body - the validated body (the proxy's validation stage parsed it).
 * @returns the key, or `undefined` (not cacheable) without a body, or when `bank`,
 *   `account` or `currency` is not a string.
 */
async function resolveKeyOf(body: ValidBody | undefined): Promise<string | undefined> {
  const { bank, account, currency } = body?.value ?? {};
  if (typeof bank !== 'string' || typeof account !== 'string' || typeof currency !== 'string') {
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
 * @returns the key, or `undefined` (not cacheable) when the body is not a JSON object
 *   with string `bank`, `account` and `currency`.
 *
 * @internal Exported for the tests, which call it directly.
 */
export function resolveCacheKey(body: Uint8Array | undefined): Promise<string | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    return Promise.resolve(undefined);
  }
  if (typeof value !== 'object' || value === null) return Promise.resolve(undefined);
  return resolveKeyOf({ text: '', value: value as ValidBody['value'] });
}

/**
 * The KV key of a cacheable request, by the route's cache policy.
 *
 * @param policy - `banks` or `resolve` (worker/routes/route.ts).
 * @param query - the validated query.
 * @param body - the validated request body.
 * @returns the key, or `undefined` when this request is not cacheable.
 */
export function cacheKeyFor(
  policy: CachePolicy,
  query: ValidQuery | undefined,
  body: ValidBody | undefined,
): Promise<string | undefined> {
  return policy === 'banks' ? Promise.resolve(banksCacheKey(query)) : resolveKeyOf(body);
}
