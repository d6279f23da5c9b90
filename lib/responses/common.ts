// Field schemas shared by the response shapes: lenient where the spec is loose.
import * as v from 'valibot';
import type { Custom, Optional } from '../schemas/common.ts';

/** An amount in major units as the service sends it: a JSON number (or a decimal string, normalized to a number). */
export const ResponseAmount: v.SchemaWithPipe<
  readonly [Custom<number | string>, v.TransformAction<number | string, number>]
> = v.pipe(
  v.custom<number | string>(
    (value) =>
      typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)),
    'Expected an amount',
  ),
  v.transform(Number),
);

/** An optional text field that may come as `null`. */
export const OptionalText: Optional<Custom<string | null>> = v.optional(
  v.custom<string | null>(
    (value) => value === null || typeof value === 'string',
    'Expected a string or null',
  ),
);

/** Metadata: an object, or `null`/absent. */
export const OptionalMetadata: Optional<Custom<Record<string, unknown> | null>> = v.optional(
  v.custom<Record<string, unknown> | null>(
    (value) => value === null || (typeof value === 'object' && !Array.isArray(value)),
    'Expected an object or null',
  ),
);

/**
 * A canonical record: its typed fields plus every other field the service sent, kept as
 * sent, so a field the service adds later still reaches the caller (the response
 * schemas are valibot loose objects listing only the known ones).
 */
export type Open<T> = T & { [field: string]: unknown };
