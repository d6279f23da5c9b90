// How times, numbers, statuses and bodies are written on the page. Times use one clock
// (24-hour, year first) in one time zone, the operator's choice, and always name that zone;
// numbers are grouped one way. Neither depends on the browser's locale, and nothing here
// hands its language tag to Intl unchecked: Chromium started under LANG=C.UTF-8 reports
// `en-US@posix`, a tag every Intl constructor refuses with a RangeError.

/** The time zone the console writes times in: UTC, or the browser's own zone. */
export type TimeZoneChoice = 'utc' | 'local';

/** Where the choice is kept, so it survives a reload and the next visit (not a secret). */
const TIME_ZONE_KEY = 'edgepay-console-time-zone';

let chosenZone: TimeZoneChoice = readStoredZone();

function readStoredZone(): TimeZoneChoice {
  try {
    return globalThis.localStorage?.getItem(TIME_ZONE_KEY) === 'local' ? 'local' : 'utc';
  } catch {
    // Storage can be blocked by the browser's settings: times stay in UTC.
    return 'utc';
  }
}

/** The time zone times are written in now: `'utc'` unless the operator chose local time. */
export function timeZoneChoice(): TimeZoneChoice {
  return chosenZone;
}

/**
 * Writes every time in `choice` from now on and remembers it in `localStorage`. Pages
 * already drawn show it when they next render.
 *
 * @param choice - `'utc'` or `'local'` (the browser's time zone).
 */
export function chooseTimeZone(choice: TimeZoneChoice): void {
  chosenZone = choice;
  try {
    globalThis.localStorage?.setItem(TIME_ZONE_KEY, choice);
  } catch {
    // Not kept when storage is blocked; the choice still holds until the tab closes.
  }
}

/**
 * The browser's time zone by name (`Europe/Berlin`), or `null` when it reports none.
 */
export function localZoneName(): string | null {
  try {
    return new Intl.DateTimeFormat().resolvedOptions().timeZone ?? null;
  } catch {
    return null;
  }
}

/** The calendar and clock fields of `date` in the chosen zone, and the zone's label. */
interface TimeParts {
  readonly date: string;
  readonly minute: string;
  readonly second: string;
  readonly zone: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

function partsOf(date: Date): TimeParts {
  const utc = chosenZone === 'utc';
  const year = utc ? date.getUTCFullYear() : date.getFullYear();
  const month = utc ? date.getUTCMonth() : date.getMonth();
  const day = utc ? date.getUTCDate() : date.getDate();
  const hours = utc ? date.getUTCHours() : date.getHours();
  const minutes = utc ? date.getUTCMinutes() : date.getMinutes();
  const seconds = utc ? date.getUTCSeconds() : date.getSeconds();
  const minute = `${pad(hours)}:${pad(minutes)}`;
  return {
    date: `${year}-${pad(month + 1)}-${pad(day)}`,
    minute,
    second: `${minute}:${pad(seconds)}`,
    zone: utc ? 'UTC' : offsetLabel(-date.getTimezoneOffset()),
  };
}

// The local zone as its offset at that instant (daylight saving included): `UTC+05:30`.
function offsetLabel(minutesEast: number): string {
  const sign = minutesEast < 0 ? '-' : '+';
  const size = Math.abs(minutesEast);
  return `UTC${sign}${pad(Math.floor(size / 60))}:${pad(size % 60)}`;
}

/**
 * A time for people, 24-hour, in the chosen time zone, which it names:
 * `2026-11-24 14:30:05 UTC`, or `2026-11-24 20:00:05 UTC+05:30` in local time.
 *
 * @param iso - an ISO 8601 time from the API.
 * @param precision - `'second'` (the default) or `'minute'`.
 * @returns `iso` itself when it is not a time.
 */
export function formatTime(iso: string, precision: 'second' | 'minute' = 'second'): string {
  return timeWords(iso, precision)?.join(' ') ?? iso;
}

/**
 * The three words of {@link formatTime}: the date, the clock and the zone, e.g.
 * `['2026-11-24', '14:30:05', 'UTC']`, for a page that keeps each on one line.
 *
 * @param iso - an ISO 8601 time from the API.
 * @param precision - `'second'` (the default) or `'minute'`.
 * @returns `null` when `iso` is not a time.
 */
export function timeWords(
  iso: string,
  precision: 'second' | 'minute' = 'second',
): [date: string, clock: string, zone: string] | null {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return null;
  const parts = partsOf(date);
  return [parts.date, parts[precision], parts.zone];
}

/**
 * A chart tick: the 24-hour clock in the chosen zone (`14:00`), with the date on a second
 * line when it is the first tick or a new day.
 *
 * @param seconds - a Unix time in seconds (uPlot's unit).
 * @param previous - the tick before it, in seconds, or `null` for the first.
 */
export function formatTick(seconds: number, previous: number | null): string {
  const parts = partsOf(new Date(seconds * 1000));
  const dayBefore = previous === null ? null : partsOf(new Date(previous * 1000)).date;
  return dayBefore === parts.date ? parts.minute : `${parts.minute}\n${parts.date}`;
}

/** The chosen time zone's name as the page writes it next to a heading or a field: `UTC`. */
export function zoneName(): string {
  return chosenZone === 'utc' ? 'UTC' : `local time (${localZoneName() ?? 'browser'})`;
}

/**
 * A language tag every Intl constructor accepts: the browser's first one that Intl takes
 * (a POSIX modifier such as `@posix` dropped), else `en-US`. Never throws.
 */
export function displayLocale(): string {
  const reported = globalThis.navigator?.languages ?? [globalThis.navigator?.language ?? ''];
  for (const tag of reported) {
    try {
      const [canonical] = Intl.getCanonicalLocales(tag.replace(/@.*$/, ''));
      if (canonical !== undefined && canonical !== 'und') return canonical;
    } catch {
      // Not a language tag Intl knows: try the next one.
    }
  }
  return 'en-US';
}

/**
 * A count with its thousands grouped by commas (`12,345`), the same under every browser
 * locale, as the console's amounts and times are.
 *
 * @param n - a whole number.
 */
export function formatCount(n: number): string {
  return groupDigits(String(Math.round(n)));
}

/**
 * Whole-number digits with their thousands grouped by commas: `12345` gives `12,345`, `-1234`
 * gives `-1,234`. Counts and amounts group the same way through it.
 *
 * @param digits - an optional minus sign, then decimal digits (no fraction).
 */
export function groupDigits(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** How a time is typed into a field of the console, as it writes times (shown as a placeholder). */
export const TIME_INPUT_FORMAT = 'YYYY-MM-DD HH:MM';

/**
 * An ISO time as the text of a time field, `2026-11-24 14:30`: the console's 24-hour format
 * in the chosen time zone, to the minute, without the zone (the field's label names it).
 *
 * @param iso - an ISO 8601 time, or '' for none.
 * @returns '' when `iso` is empty or not a time.
 */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (iso === '' || Number.isNaN(date.getTime())) return '';
  const parts = partsOf(date);
  return `${parts.date} ${parts.minute}`;
}

/**
 * The text of a time field, read in the chosen time zone, as an ISO 8601 UTC time.
 *
 * @param value - `2026-11-24 14:30` or `2026-11-24 14:30:15` in the chosen zone (a `T`
 *   between date and time is taken too); spaces around it are ignored.
 * @returns '' when the field is empty; `null` when it is not such a time, or names a day or
 *   clock time that does not exist (`2026-02-30`, `24:00`, a local time skipped by a
 *   daylight-saving change).
 */
export function fromLocalInput(value: string): string | null {
  const typed = value.trim();
  if (typed === '') return '';
  const parts = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?$/.exec(typed);
  if (parts === null) return null;
  const [, day = '', minute = '', second = ':00'] = parts;
  // Without an offset, Date reads a date and time as local; with `Z`, as UTC.
  const written = `${day}T${minute}${second}`;
  const date = new Date(chosenZone === 'utc' ? `${written}Z` : written);
  if (Number.isNaN(date.getTime())) return null;
  // Date rolls a day or hour past the end over (February 30th is March 2nd): written back
  // in the same zone, a real time reads as typed.
  const back = partsOf(date);
  return back.date === day && back.second === `${minute}${second}` ? date.toISOString() : null;
}

/**
 * A JSON body indented for reading; a body that is not JSON is shown as it is.
 *
 * @param raw - the exact bytes received, as text.
 */
export function prettyJson(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/**
 * A subscriber's answer in a few words: `HTTP 500`, or `no answer`.
 *
 * @param status - the HTTP status, `null` when nothing answered.
 */
export function answerOf(status: number | null): string {
  return status === null ? 'no answer' : `HTTP ${status}`;
}
