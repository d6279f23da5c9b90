/**
 * The delivery limits and ordering of a subscription as the admin API accepts them
 * (`max_per_second`, `max_in_flight`, `ordered` of POST and PATCH /admin/subscriptions), each
 * refused with a message naming its range.
 */
import * as v from 'valibot';

/** Slowest `max_per_second` accepted: one attempt every 100 s. */
const MIN_PER_SECOND = 0.01;
/** Fastest `max_per_second` accepted, above what one subscriber is ever sent. */
const MAX_PER_SECOND = 1000;
/**
 * Largest `max_in_flight` accepted: a subscriber that takes more at once needs no limit
 * (null), so a larger number is more likely a typo than a wish.
 */
const MAX_IN_FLIGHT = 100;

/** `max_per_second`: a decimal from 0.01 to 1000, or null for no limit. */
export const maxPerSecondSchema = v.nullable(
  v.pipe(
    v.number(),
    v.description(
      `Most attempts a second to this subscriber, a decimal from ${MIN_PER_SECOND} to ` +
        `${MAX_PER_SECOND} (0.5 = one every 2 s); null = no limit.`,
    ),
    v.minValue(MIN_PER_SECOND, `Expected a number from ${MIN_PER_SECOND} to ${MAX_PER_SECOND}`),
    v.maxValue(MAX_PER_SECOND, `Expected a number from ${MIN_PER_SECOND} to ${MAX_PER_SECOND}`),
  ),
);

/** `max_in_flight`: a whole number from 1 to 100, or null for the relay's default. */
export const maxInFlightSchema = v.nullable(
  v.pipe(
    v.number(),
    v.description(
      `Most attempts to this subscriber at the same time, 1 to ${MAX_IN_FLIGHT}; null = the ` +
        "relay's default.",
    ),
    v.integer(`Expected a whole number from 1 to ${MAX_IN_FLIGHT}`),
    v.minValue(1, `Expected a whole number from 1 to ${MAX_IN_FLIGHT}`),
    v.maxValue(MAX_IN_FLIGHT, `Expected a whole number from 1 to ${MAX_IN_FLIGHT}`),
  ),
);

/** `ordered`: per-reference ordering on or off. */
export const orderedSchema = v.pipe(
  v.boolean(),
  v.description(
    "true: the events of one reference are delivered in the provider's order, never the " +
      'later one first.',
  ),
);
