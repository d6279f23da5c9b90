import { logEvent } from '../http/log.ts';

let cached: { raw: string; limit: number } | undefined;

/**
 * `RATE_LIMIT_PER_MINUTE`, parsed once per value: requests per minute per caller,
 * `0` (or empty) turning rate limiting off, the local default. An invalid value is
 * logged once and turns rate limiting off (a typo must not take the gateway down).
 *
 * @param raw - the variable's value.
 * @returns the limit per minute, `0` when off.
 */
export function rateLimitPerMinute(raw: string | undefined): number {
  const value = (raw ?? '').trim();
  if (cached === undefined || cached.raw !== value) {
    cached = { raw: value, limit: parseLimit(value) };
  }
  return cached.limit;
}

function parseLimit(value: string): number {
  if (value === '' || value === '0') return 0;
  if (/^\d{1,9}$/.test(value)) return Number(value);
  logEvent('error', 'config_invalid', {
    setting: 'RATE_LIMIT_PER_MINUTE',
    problem: 'expected a non-negative integer of requests per minute; rate limiting is off',
  });
  return 0;
}
