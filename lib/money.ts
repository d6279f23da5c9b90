// Exact money: amounts as integer minor units, never binary-float sums (0.1 + 0.2 is not
// 0.3 in floating point, and a balance must add up to the kobo).

/** Fraction digits of every currency the sandbox handles (NGN kobo, GHS pesewas, ...). */
export const MINOR_UNIT_DIGITS = 2;

/** Minor units in one major unit (10 ** MINOR_UNIT_DIGITS). */
export const MINOR_PER_MAJOR = 100;

/**
 * Largest accepted amount, in minor units (999,999,999,999.99 major units). Fifteen
 * significant digits keep `minor / 100` printing as the exact decimal in JSON.
 */
export const MAX_AMOUNT_MINOR = 99_999_999_999_999;

/** A positive decimal amount in major units as text: up to 13 whole digits, up to 2 fraction digits. */
export const DECIMAL_AMOUNT = /^(\d{1,13})(?:\.(\d{1,2}))?$/;

/**
 * Parses a major-unit amount, given as a decimal string (`"5000.50"`) or a number
 * (`5000.5`), into integer minor units (`500050`). Numbers are read through their
 * shortest decimal form, so `0.1` is 10 minor units and `0.1 + 0.2`
 * (`0.30000000000000004`) is rejected for having too many fraction digits.
 *
 * @param value - major units; at most 2 fraction digits, no sign, no exponent.
 * @returns the amount in minor units (a safe integer >= 0), or `undefined` when the
 *   value is not such a decimal or exceeds 999,999,999,999.99 (`MAX_AMOUNT_MINOR`).
 */
export function parseMinorUnits(value: unknown): number | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value);
  } else if (typeof value === 'string') {
    text = value;
  } else {
    return undefined;
  }
  const match = DECIMAL_AMOUNT.exec(text);
  if (match === null) return undefined;
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? '').padEnd(MINOR_UNIT_DIGITS, '0'));
  const minor = whole * MINOR_PER_MAJOR + fraction;
  return minor <= MAX_AMOUNT_MINOR ? minor : undefined;
}

/**
 * Whether `value` is a positive amount {@link parseMinorUnits} accepts.
 *
 * @param value - a decimal string or number in major units.
 * @returns `true` for amounts of at least one minor unit.
 */
export function isPositiveAmount(value: unknown): boolean {
  const minor = parseMinorUnits(value);
  return minor !== undefined && minor > 0;
}

/**
 * Converts a major-unit amount to minor units, for values already validated.
 *
 * @param value - a decimal string or number in major units.
 * @returns integer minor units.
 * @throws {RangeError} when the value is not an exact amount (validate first).
 */
export function toMinorUnits(value: string | number): number {
  const minor = parseMinorUnits(value);
  if (minor === undefined) {
    throw new RangeError(`Not an exact amount with at most 2 fraction digits: ${String(value)}`);
  }
  return minor;
}

/**
 * Converts integer minor units to a JSON number in major units (`500050` -> `5000.5`).
 * Division by 100 is correctly rounded, so the number prints as the exact decimal.
 *
 * @param minor - a safe integer amount in minor units.
 * @returns the amount in major units.
 */
export function toMajorUnits(minor: number): number {
  return minor / MINOR_PER_MAJOR;
}

/**
 * Formats integer minor units as a fixed two-digit decimal string (`500050` -> `"5000.50"`).
 *
 * @param minor - a safe integer amount in minor units (may be negative).
 * @returns the decimal string in major units, without grouping separators.
 */
export function formatMinorUnits(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const whole = (abs - (abs % MINOR_PER_MAJOR)) / MINOR_PER_MAJOR;
  const fraction = String(abs % MINOR_PER_MAJOR).padStart(MINOR_UNIT_DIGITS, '0');
  return `${sign}${whole}.${fraction}`;
}

/**
 * Multiplies minor units by a rate given in basis points (1/10,000), rounding half up
 * to the minor unit, with integer arithmetic only.
 *
 * @param minor - a non-negative safe integer in minor units.
 * @param basisPoints - a non-negative integer rate (150 = 1.5 %).
 * @returns the rounded product in minor units.
 */
export function applyBasisPoints(minor: number, basisPoints: number): number {
  // BigInt: minor * basisPoints can pass 2^53 for the largest amounts.
  const scaled = BigInt(minor) * BigInt(basisPoints) + 5_000n;
  return Number(scaled / 10_000n);
}
