import { describe, expect, it } from 'vitest';

/**
 * How one side reads a `Retry-After` value it got in a response.
 *
 * @returns the seconds it will wait, or `undefined` when it ignores the value and keeps
 *   its own schedule.
 */
export type RetryAfterReader = (value: string) => Promise<number | undefined>;

/** How far ahead the dates of the suite are, in seconds (under the SDK's 60 s cap). */
const RETRY_AFTER_AHEAD_SEC = 30;

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
const two = (n: number) => String(n).padStart(2, '0');

/**
 * `RETRY_AFTER_AHEAD_SEC` from now (whole seconds) in each of the three HTTP-date forms
 * RFC 9110 section 5.6.7 makes every recipient accept.
 */
function httpDates(nowMs: number = Date.now()): Record<string, string> {
  const at = new Date(Math.floor(nowMs / 1000) * 1000 + RETRY_AFTER_AHEAD_SEC * 1000);
  const day = WEEKDAYS[at.getUTCDay()] ?? '';
  const month = MONTHS[at.getUTCMonth()] ?? '';
  const time = `${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())}`;
  const date = at.getUTCDate();
  return {
    'IMF-fixdate': at.toUTCString(),
    rfc850: `${day}, ${two(date)}-${month}-${two(at.getUTCFullYear() % 100)} ${time} GMT`,
    asctime: `${day.slice(0, 3)} ${month} ${String(date).padStart(2, ' ')} ${time} ${at.getUTCFullYear()}`,
  };
}

/**
 * The Retry-After suite, run against each side that honours the header (the SDK's
 * retries in test/lib, the relay's delivery schedule in test/worker): they must read
 * the same values the same way.
 *
 * @param side - names the side in the test titles.
 * @param read - how that side reads a value.
 */
export function retryAfterSuite(side: string, read: RetryAfterReader): void {
  describe(`Retry-After (${side})`, () => {
    it('should honour delay-seconds', async () => {
      expect(await read(String(RETRY_AFTER_AHEAD_SEC))).toBe(RETRY_AFTER_AHEAD_SEC);
    });

    it.each(Object.keys(httpDates()))('should honour an HTTP-date as %s', async (form) => {
      const value = httpDates()[form] ?? '';
      const seconds = await read(value);
      // Whole seconds, rounded up, from a date made a moment earlier.
      expect(seconds, value).toBeGreaterThanOrEqual(RETRY_AFTER_AHEAD_SEC - 2);
      expect(seconds, value).toBeLessThanOrEqual(RETRY_AFTER_AHEAD_SEC);
    });

    it.each([
      ['a fraction', '1.5'],
      ['a negative number', '-5'],
      ['an ISO date', '2030-01-01'],
      ['a date with a numeric zone', 'Tue, 01 Jan 2030 00:00:00 +0000'],
      ['words', 'soon'],
    ])('should ignore %s', async (_, value) => {
      expect(await read(value)).toBeUndefined();
    });
  });
}
