// When a cron trigger of wrangler.toml fires, for the local cron of `npm start`
// (scripts/local-cron.ts). Cloudflare runs cron triggers in UTC on five fields (minute,
// hour, day of month, month, day of week). Only the numeric part of that syntax is read
// here: numbers, `*`, ranges `a-b`, steps `/n` and lists `,` in the first four fields,
// and `*` for the day of week, whose numbering (1-7 from Sunday) and names, like `L`,
// `W` and `#`, are left out on purpose. An expression outside that is refused with a
// message, never guessed at.

/** How far ahead {@link CronSchedule.next} looks, in minutes (366 days, leap years included). */
const SEARCH_MINUTES = 366 * 24 * 60;
const MINUTE_MS = 60_000;

/** One field's name and the values it may take. */
interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
];

/** A parsed cron expression. */
export interface CronSchedule {
  /** The expression as written in wrangler.toml. */
  readonly expression: string;
  /**
   * The first time the trigger fires strictly after `after`.
   *
   * @param after - epoch milliseconds.
   * @returns epoch milliseconds, on a whole UTC minute.
   */
  next(after: number): number;
}

/** A cron expression {@link parseCron} does not read. */
export class CronExpressionError extends Error {
  override readonly name = 'CronExpressionError';
}

function parseNumber(text: string, field: FieldSpec, expression: string): number {
  if (!/^\d+$/.test(text)) {
    throw new CronExpressionError(
      `cron "${expression}": ${field.name} "${text}" is not a number the local cron reads`,
    );
  }
  const value = Number(text);
  if (value < field.min || value > field.max) {
    throw new CronExpressionError(
      `cron "${expression}": ${field.name} ${value} is outside ${field.min}-${field.max}`,
    );
  }
  return value;
}

/** The values one field allows, e.g. `*\/15` -> {0, 15, 30, 45} for the minute. */
function parseField(text: string, field: FieldSpec, expression: string): ReadonlySet<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) {
      throw new CronExpressionError(`cron "${expression}": ${field.name} "${part}" has two steps`);
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (stepText !== undefined && !(/^\d+$/.test(stepText) && step >= 1)) {
      throw new CronExpressionError(
        `cron "${expression}": ${field.name} step "${stepText}" is not a whole number >= 1`,
      );
    }
    let low = field.min;
    let high = field.max;
    if (range !== '*') {
      const [from = '', to] = range.split('-');
      low = parseNumber(from, field, expression);
      // `a/n` means from a to the field's end, as in standard cron.
      high = to !== undefined ? parseNumber(to, field, expression) : stepText ? field.max : low;
      if (high < low) {
        throw new CronExpressionError(
          `cron "${expression}": ${field.name} range "${range}" is empty`,
        );
      }
    }
    for (let value = low; value <= high; value += step) values.add(value);
  }
  return values;
}

/**
 * Reads a five-field cron expression (UTC) in the subset described at the top of this file.
 *
 * @param expression - e.g. `*\/15 * * * *` (every 15 minutes).
 * @returns the schedule.
 * @throws {CronExpressionError} naming the field when the expression is outside that
 *   subset or never fires within a year (e.g. `0 0 31 2 *`).
 *
 * @example
 * ```ts
 * parseCron('*\/15 * * * *').next(Date.parse('2026-01-01T10:07:30Z')); // 10:15:00Z
 * ```
 */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) {
    throw new CronExpressionError(
      `cron "${expression}": expected 5 fields (minute hour day-of-month month day-of-week)`,
    );
  }
  if (parts[4] !== '*') {
    throw new CronExpressionError(
      `cron "${expression}": the local cron reads only "*" as the day of week`,
    );
  }
  const [minutes, hours, days, months] = FIELDS.map((field, index) =>
    parseField(parts[index] as string, field, expression),
  ) as [ReadonlySet<number>, ReadonlySet<number>, ReadonlySet<number>, ReadonlySet<number>];
  const matches = (time: Date): boolean =>
    minutes.has(time.getUTCMinutes()) &&
    hours.has(time.getUTCHours()) &&
    days.has(time.getUTCDate()) &&
    months.has(time.getUTCMonth() + 1);
  const schedule: CronSchedule = {
    expression,
    next(after) {
      // Minute by minute: a year is about half a million cheap checks at the very worst,
      // and the usual schedules match within an hour.
      let candidate = Math.floor(after / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
      for (let step = 0; step < SEARCH_MINUTES; step++, candidate += MINUTE_MS) {
        if (matches(new Date(candidate))) return candidate;
      }
      throw new CronExpressionError(`cron "${expression}": never fires within a year`);
    },
  };
  schedule.next(Date.UTC(2024, 0, 1)); // a leap year ahead, so 29 February counts
  return schedule;
}
