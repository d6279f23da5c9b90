// Verify before resend, the check that makes it safe (a record found by its reference is
// this request's outcome only when it agrees with what the request asked for), and what an
// answer rebuilt from that record is made of.
import type { Lookup } from '../endpoints.ts';

/**
 * The request fields a record found by a lookup contradicts: verify before resend may
 * take the record as this request's outcome only when none is listed. A field the request
 * left out, or the record does not carry (a flat response variant omits some), is not
 * compared.
 *
 * @param lookup - the endpoint's lookup, with its `match` fields.
 * @param sent - the request body that was sent (JSON values).
 * @param record - the normalized record the lookup found.
 * @returns the request body field names whose values differ, in `match` order; `[]` when
 *   the record agrees.
 */
export function lookupMismatches(
  lookup: Lookup,
  sent: Readonly<Record<string, unknown>>,
  record: unknown,
): string[] {
  const found = record as Record<string, unknown>;
  return lookup.match.filter((field) => {
    const wanted = sent[field];
    const actual = found[field];
    if (wanted == null || actual == null) return false;
    return field.endsWith('amount')
      ? // Decimals of at most 15 significant digits (every amount) map to distinct doubles,
        // so `"7.25"` and `7.25` compare equal and `7.25` and `7.26` never do.
        Number(wanted) !== Number(actual)
      : String(wanted).toLowerCase() !== String(actual).toLowerCase();
  });
}

/** `message` of a response rebuilt from a record: says where the response came from. */
export const RECOVERED_MESSAGE = 'Recovered from the existing record after an interrupted request';

/**
 * The listed fields a record has, in the listed order: the part of a creation response a
 * recovered response carries, in the order the payment service writes them.
 *
 * @param record - the normalized record a lookup found.
 * @param fields - the response's field names, in the service's order.
 * @returns a new object with the fields the record has (`undefined` ones left out).
 */
export function pickFields(
  record: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (record[field] !== undefined) picked[field] = record[field];
  return picked;
}
