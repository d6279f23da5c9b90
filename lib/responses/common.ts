// Field schemas shared by the response shapes: lenient where the spec is loose.
import * as v from 'valibot';

/** An amount in major units as the service sends it: a JSON number (or a decimal string, normalized to a number). */
export const ResponseAmount = v.pipe(
  v.custom<number | string>(
    (value) =>
      typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)),
    'Expected an amount',
  ),
  v.transform(Number),
);

/** An optional text field that may come as `null`. */
export const OptionalText = v.nullish(v.string());

/** Metadata: an object, or `null`/absent. */
export const OptionalMetadata = v.nullish(
  v.custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    'Expected an object',
  ),
);
