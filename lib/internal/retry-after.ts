// The three HTTP-date forms a recipient must accept (RFC 9110 section 5.6.7): IMF-fixdate
// "Sun, 06 Nov 1994 08:49:37 GMT", rfc850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime
// "Sun Nov  6 08:49:37 1994", told apart by weekday and time of day from what Date.parse
// alone would guess at ("1.5" is a day in 2001, "2030-01-01" an ISO date).
const HTTP_DATE = /^[A-Z][a-z]{2}.* \d\d:\d\d:\d\d (?:GMT|\d{4})$/;

/**
 * Reads a `Retry-After` value (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date in
 * any of its three forms. A two-digit rfc850 year is read as the JavaScript engines read
 * it (00 to 49 as 20xx).
 *
 * @param value - the header value; `null` or `undefined` when absent.
 * @param nowMs - the current time in milliseconds since the epoch, for an HTTP-date.
 * @returns whole seconds to wait from `nowMs` (an HTTP-date rounded up, 0 when it is
 *   past); `undefined` when absent or not one of those forms (`-5`, `1.5`, `2030-01-01`).
 *
 * @example
 * ```ts
 * parseRetryAfter('120', Date.now()); // 120
 * parseRetryAfter('Tue, 01 Jan 2030 00:10:00 GMT', Date.parse('2030-01-01T00:00:00Z')); // 600
 * ```
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text);
  // asctime names no zone: it is GMT, not the local time Date.parse would assume.
  const at = HTTP_DATE.test(text) ? Date.parse(text.replace(/( GMT)?$/, ' GMT')) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
