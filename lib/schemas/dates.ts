// Calendar dates and ISO 8601 instants as the spec's filters and mandates use them.

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** A date, or a date-time with optional seconds, fraction and zone (list filters; docs/payments-api.md, "Resources > Conventions"). */
export const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.(\d{1,9}))?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/;

const DAY_MS = 86_400_000;

/**
 * Whether `text` is a real calendar date written `YYYY-MM-DD` (so `2025-02-30` is not).
 *
 * @param text - the candidate date.
 */
export function isCalendarDate(text: string): boolean {
  // Date.parse rolls 2025-02-30 over to March: a real date reads back unchanged.
  const ms = DATE.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(text);
}

/**
 * Milliseconds since the epoch of the start (00:00:00.000 UTC) of a `YYYY-MM-DD` date.
 *
 * @param date - a calendar date (see {@link isCalendarDate}).
 * @returns epoch milliseconds, or `NaN` when `date` is not a calendar date.
 */
function startOfDayMs(date: string): number {
  return isCalendarDate(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
}

/**
 * Adds whole days to a `YYYY-MM-DD` date in UTC.
 *
 * @param date - a calendar date.
 * @param days - days to add (may be negative).
 * @returns the resulting `YYYY-MM-DD` date.
 */
export function addDays(date: string, days: number): string {
  return new Date(startOfDayMs(date) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Reads an ISO 8601 date or date-time filter bound as an instant. A bound without a
 * zone is UTC. An `end` bound covers the whole precision it is written in (a date runs
 * to 23:59:59.999, a time without seconds to hh:mm:59.999, without milliseconds to
 * hh:mm:ss.999), which is what "inclusive" means to a person typing it.
 *
 * @param text - `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.fff]][Z|±hh:mm]`.
 * @param bound - `'start'` for the earliest instant, `'end'` for the latest.
 * @returns epoch milliseconds, or `undefined` when `text` is not such a value.
 */
export function parseInstant(text: string, bound: 'start' | 'end'): number | undefined {
  const match = DATE_TIME.exec(text);
  if (match === null || !isCalendarDate(match[1] ?? '')) return undefined;
  const [, date, hours, minutes = '00', seconds, fraction, zone = 'Z'] = match;
  // The offset as Date.parse reads it everywhere: "+01:00", not "+0100".
  const offset = zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = (fraction ?? '').padEnd(3, '0').slice(0, 3);
  const start = Date.parse(`${date}T${hours ?? '00'}:${minutes}:${seconds ?? '00'}.${ms}${offset}`);
  if (bound === 'start') return start;
  // The written precision: a whole day, minute or second, or the instant itself.
  const span =
    hours === undefined ? DAY_MS - 1 : seconds === undefined ? 59_999 : fraction ? 0 : 999;
  return start + span;
}
