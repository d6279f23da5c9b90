// Pieces shared by the request schemas of every endpoint group (docs/payments-api.md, "Resources").
import * as v from 'valibot';
import { isPositiveAmount } from '../money.ts';
import { isCalendarDate, parseInstant } from './dates.ts';

/** A string schema whose value must match a regular expression. */
export type PatternSchema = v.SchemaWithPipe<
  readonly [v.StringSchema<undefined>, v.RegexAction<string, string>]
>;

/** A string schema whose value must pass a predicate. */
export type CheckedStringSchema = v.SchemaWithPipe<
  readonly [v.StringSchema<undefined>, v.CheckAction<string, string>]
>;

/** What {@link textSchema} returns: a string of 1 to `max` characters. */
export type TextSchema = v.SchemaWithPipe<
  readonly [
    v.StringSchema<undefined>,
    v.MinLengthAction<string, 1, undefined>,
    v.MaxLengthAction<string, number, undefined>,
  ]
>;

/** A `v.custom` schema: a value of type `T` that passes a predicate. */
export type Custom<T> = v.CustomSchema<T, v.ErrorMessage<v.CustomIssue> | undefined>;

/** A schema that may be absent (`undefined`), without a default. */
export type Optional<Wrapped extends v.GenericSchema> = v.OptionalSchema<Wrapped, undefined>;

/**
 * A positive amount in major units, as a decimal string (`"5000.50"`) or a JSON
 * number (`5000.5`), with at most 2 fraction digits (the currency's minor unit) and at
 * most 999,999,999,999.99. The value is kept as given; convert it with
 * `toMinorUnits` from `lib/money.ts` (docs/payments-api.md, "Resources > Amount conventions").
 */
export const AmountSchema: v.SchemaWithPipe<
  readonly [Custom<string | number>, v.CheckAction<string | number, string>]
> = v.pipe(
  v.custom<string | number>(
    (value) => typeof value === 'string' || typeof value === 'number',
    'Expected an amount (number or decimal string)',
  ),
  v.check(
    (value: string | number) => isPositiveAmount(value),
    'Expected a positive amount with at most 2 decimal places',
  ),
);

/** An ISO 4217 currency code in upper case, e.g. `NGN` (docs/payments-api.md, "Resources > Conventions"). */
export const CurrencySchema: PatternSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{3}$/, 'Expected an ISO 4217 currency code such as NGN'),
);

/** An email address (at most 254 characters). */
export const EmailSchema: v.SchemaWithPipe<
  readonly [
    v.StringSchema<undefined>,
    v.MaxLengthAction<string, 254, undefined>,
    v.RegexAction<string, string>,
  ]
> = v.pipe(v.string(), v.maxLength(254), v.regex(v.EMAIL_REGEX, 'Expected an email address'));

/**
 * A merchant reference: 1 to 100 printable ASCII characters without spaces, never `.` or
 * `..`. References appear in paths (verify, retrieve), where they are percent-encoded.
 */
export const ReferenceSchema: v.SchemaWithPipe<
  readonly [v.StringSchema<undefined>, v.RegexAction<string, string>, v.CheckAction<string, string>]
> = v.pipe(
  v.string(),
  v.regex(/^[\x21-\x7e]{1,100}$/, 'Expected 1 to 100 printable characters without spaces'),
  // A path segment of "." or ".." is resolved away by every URL parser: unreachable by verify.
  v.check((text) => text !== '.' && text !== '..', 'Expected a reference other than "." and ".."'),
);

/**
 * A non-empty string of at most `max` characters, after trimming nothing (the value is
 * kept as sent).
 *
 * @param max - maximum length in characters.
 * @default max 255
 */
export function textSchema(max = 255): TextSchema {
  return v.pipe(v.string(), v.minLength(1), v.maxLength(max));
}

/** A calendar date written `YYYY-MM-DD` (docs/payments-api.md, "Resources > Conventions"). */
export const DateSchema: CheckedStringSchema = v.pipe(
  v.string(),
  v.check(isCalendarDate, 'Expected a date YYYY-MM-DD'),
);

/** An ISO 8601 date-time (or a date) used as an inclusive list filter bound. */
export const DateTimeSchema: CheckedStringSchema = v.pipe(
  v.string(),
  v.check((text) => parseInstant(text, 'start') !== undefined, 'Expected an ISO 8601 date-time'),
);

/**
 * An absolute `http:` or `https:` URL of at most 2048 characters (callback and webhook
 * addresses).
 */
export const HttpUrlSchema: v.SchemaWithPipe<
  readonly [
    v.StringSchema<undefined>,
    v.MaxLengthAction<string, 2048, undefined>,
    v.CheckAction<string, string>,
  ]
> = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.check(
    (text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol),
    'Expected an http(s) URL',
  ),
);

/** Key-value pairs returned unchanged (docs/payments-api.md, "Resources > Conventions"): a JSON object, not an array. */
export const MetadataSchema: Custom<Record<string, unknown>> = v.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'Expected an object',
);

/** A bank code: 3 to 6 digits (docs/payments-api.md, "Resources > Conventions"). */
export const BankCodeSchema: PatternSchema = v.pipe(
  v.string(),
  v.regex(/^\d{3,6}$/, 'Expected a bank code of 3 to 6 digits'),
);

/** A bank account number: 6 to 20 digits (a NUBAN in Nigeria has 10). */
export const AccountNumberSchema: PatternSchema = v.pipe(
  v.string(),
  v.regex(/^\d{6,20}$/, 'Expected an account number of 6 to 20 digits'),
);

/** Query `page`: a decimal integer string, at least 1. @default '1' (docs/payments-api.md, "Limits") */
export const PageQuerySchema: v.OptionalSchema<
  v.SchemaWithPipe<
    readonly [
      v.StringSchema<undefined>,
      v.RegexAction<string, string>,
      v.TransformAction<string, number>,
      v.MinValueAction<number, 1, undefined>,
    ]
  >,
  '1'
> = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d{1,9}$/, 'Expected a whole number'),
    v.transform(Number),
    v.minValue(1),
  ),
  '1',
);

/** Query `page_size`: a decimal integer string from 1 to 100. @default '10' (docs/payments-api.md, "Limits") */
export const PageSizeQuerySchema: v.OptionalSchema<
  v.SchemaWithPipe<
    readonly [
      v.StringSchema<undefined>,
      v.RegexAction<string, string>,
      v.TransformAction<string, number>,
      v.MinValueAction<number, 1, undefined>,
      v.MaxValueAction<number, 100, undefined>,
    ]
  >,
  '10'
> = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d{1,9}$/, 'Expected a whole number'),
    v.transform(Number),
    v.minValue(1),
    v.maxValue(100),
  ),
  '10',
);

/** The pagination entries every list query shares (docs/payments-api.md, "Limits"). */
const PaginationQueryEntries = {
  page: PageQuerySchema,
  page_size: PageSizeQuerySchema,
} as const;

/** Whether an inclusive `start_date`..`end_date` range is in order (either may be absent). */
function isOrderedRange(query: {
  start_date?: string | undefined;
  end_date?: string | undefined;
}): boolean {
  if (query.start_date === undefined || query.end_date === undefined) return true;
  const start = parseInstant(query.start_date, 'start');
  const end = parseInstant(query.end_date, 'end');
  return start === undefined || end === undefined || start <= end;
}

/**
 * Message of the issue raised, on `end_date`, when a range ends before it starts.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const RANGE_ORDER_MESSAGE = 'Expected end_date not before start_date';

/** What {@link crossFieldCheck} returns: a valibot `rawCheck` action carrying its message. */
export type CrossFieldCheck<T> = v.RawCheckAction<T> & { message: string };

/** An object schema followed by a {@link crossFieldCheck} over its output. */
export type CheckedObjectSchema<Entries extends v.ObjectEntries> = v.SchemaWithPipe<
  readonly [
    v.ObjectSchema<Entries, undefined>,
    CrossFieldCheck<v.InferOutput<v.ObjectSchema<Entries, undefined>>>,
  ]
>;

/**
 * A rule across fields of an object, reported on one of them (an `end_date` before
 * `start_date` is an issue on `end_date`). It runs when the fields it reads have no
 * issues of their own, even if other fields do, so one response lists every problem: what
 * valibot's `forward(partialCheck())` does, in a tenth of the bundled size (bench/README.md).
 *
 * @param reads - the fields `requirement` reads; the issue is reported on the last one.
 * @param requirement - true when the object is acceptable.
 * @param message - the issue's message.
 */
export function crossFieldCheck<T extends object>(
  reads: readonly NoInfer<keyof T & string>[],
  requirement: (input: NoInfer<T>) => boolean,
  message: string,
): CrossFieldCheck<T> {
  const field = reads[reads.length - 1] as keyof T & string;
  const check = v.rawCheck<T>(({ dataset, addIssue }) => {
    // An issue without a path means the input is not an object at all.
    const blocked = dataset.issues?.some(
      (issue) => issue.path === undefined || reads.includes(issue.path[0]?.key as never),
    );
    // Past those guards the value is the object, its read fields valid.
    const input = dataset.value as T & Record<string, unknown>;
    if (blocked || requirement(input)) return;
    addIssue({
      path: [{ type: 'object', origin: 'value', input, key: field, value: input[field] }],
    });
  });
  // Carried like any valibot action's message: the issue's text, and the rule's in OpenAPI.
  return Object.assign(check, { message });
}

/** The entries a dated list query ends with: its date range, then pagination. */
type RangedListEntries = {
  readonly start_date: Optional<CheckedStringSchema>;
  readonly end_date: Optional<CheckedStringSchema>;
} & typeof PaginationQueryEntries;

/** The schema {@link rangedListQuery} builds over `Filters`. */
export type RangedListQuerySchema<Filters extends v.ObjectEntries> = CheckedObjectSchema<
  Filters & RangedListEntries
>;

/**
 * The query schema of a list route with a date range: the route's own filters, then
 * optional `start_date` and `end_date` (inclusive; one refused on `end_date` with
 * {@link RANGE_ORDER_MESSAGE} when it ends before it starts), then `page` and `page_size`.
 *
 * @param filters - the route's own optional filters, in the order they are documented.
 * @param date - how a bound is read: `DateSchema` (whole days) or `DateTimeSchema` (instants).
 * @returns the object schema with its range check.
 */
export function rangedListQuery<Filters extends v.ObjectEntries>(
  filters: Filters,
  date: CheckedStringSchema,
): RangedListQuerySchema<Filters> {
  const query = v.object({
    ...filters,
    start_date: v.optional(date),
    end_date: v.optional(date),
    ...PaginationQueryEntries,
  });
  return v.pipe(
    query,
    crossFieldCheck(['start_date', 'end_date'], isOrderedRange, RANGE_ORDER_MESSAGE),
  ) as unknown as RangedListQuerySchema<Filters>;
}
