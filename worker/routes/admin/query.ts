/**
 * The query parameters of the admin API (`GET /admin/events`, `GET /admin/deliveries`,
 * `GET /admin/deliveries/hourly`; their route rows read them with the gateway's one query
 * reader, strictly): the exact-match text filters, the bounded whole-number parameters
 * (`page_size`, `hours`) and the opaque keyset cursor (`cursor` in, `next_cursor` out).
 */
import * as v from 'valibot';
import type { KeysetCursor } from '../../db/keyset.ts';
import { type ErrorIssue, HttpError } from '../../http/errors.ts';

/** Largest `page_size` the admin listings accept. */
export const MAX_PAGE_SIZE = 100;

/**
 * An optional query parameter holding a whole number from 1 to `max`, decimal digits
 * only (no sign, no exponent, at most as many digits as `max` has), output as a number.
 *
 * @param max - the largest value accepted.
 * @param description - the OpenAPI description (say the default there: it is the handler's).
 * @returns the valibot schema of the parameter.
 */
export function wholeNumberQuery(max: number, description: string) {
  const message = `Expected an integer from 1 to ${max}`;
  return v.optional(
    v.pipe(
      v.string(),
      v.description(description),
      v.regex(new RegExp(`^\\d{1,${String(max).length}}$`), message),
      v.transform(Number),
      v.minValue(1, message),
      v.maxValue(max, message),
    ),
  );
}

/**
 * An optional query parameter matched exactly against a stored text (an id, a reference):
 * 1 to `max` characters, taken as given (no trimming or case folding).
 *
 * @param max - the longest value accepted, in characters: no stored value is longer.
 * @param description - the OpenAPI description.
 * @returns the valibot schema of the parameter.
 */
export function exactTextQuery(max: number, description: string) {
  return v.optional(
    v.pipe(
      v.string(),
      v.description(description),
      v.nonEmpty('Expected a non-empty string'),
      v.maxLength(max, `Expected at most ${max} characters`),
    ),
  );
}

/**
 * The optional `cursor` parameter: a `next_cursor` of an earlier page, decoded to the
 * (time, id) the next page starts after. Anything else is an issue at `cursor`.
 */
export const CursorQuerySchema = v.optional(
  v.pipe(
    v.string(),
    v.description('The `next_cursor` of the previous page; absent for the first page.'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const cursor = decodeCursor(dataset.value);
      if (cursor !== undefined) return cursor;
      addIssue({ message: 'Expected a cursor returned as next_cursor' });
      return NEVER;
    }),
  ),
);

/**
 * The 400 `validation_failed` error of the admin API.
 *
 * @param message - what was invalid: the query string or the request body.
 * @param issues - one `{ path, message }` per problem.
 * @returns the error, to throw.
 */
export function validationFailed(message: string, issues: readonly ErrorIssue[]): HttpError {
  return new HttpError(400, 'validation_failed', message, { issues });
}

/**
 * The opaque `next_cursor` of a page: base64url (unpadded) of `<time>:<id>`, time in
 * epoch milliseconds. Clients pass it back as `cursor` and never look inside.
 *
 * @param cursor - where the next page starts; `null` on the last page.
 * @returns the cursor text, or `null`.
 */
export function encodeCursor(cursor: KeysetCursor | null): string | null {
  if (cursor === null) return null;
  const bytes = new TextEncoder().encode(`${cursor.at}:${cursor.id}`);
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

function decodeCursor(value: string): KeysetCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(value)) return undefined;
  try {
    const binary = atob(value.replaceAll('-', '+').replaceAll('_', '/'));
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
    const match = /^(\d{1,16}):(.+)$/s.exec(text);
    if (match === null) return undefined;
    return { at: Number(match[1]), id: match[2] ?? '' };
  } catch {
    return undefined;
  }
}
