// Query strings as the gateway reads them: one reader for every route (the proxy, the
// health check, the admin API), each route choosing how strict it is.
import * as v from 'valibot';
import { requestIssues } from '../../lib/shared.ts';
import { type ErrorIssue, HttpError } from './errors.ts';

/**
 * How strictly a route reads its query string (each route keeps the rule it has always had):
 * - `lenient` (the proxied routes): a parameter the schema declares may appear once, its
 *   first value is read, and a repeat is listed with the schema's issues; the schema
 *   decides what an undeclared parameter means (the payment service's ignore them).
 * - `declared-once` (the health check): the same, but a repeat is refused on its own,
 *   before the schema runs.
 * - `every-once` (the admin API): no parameter may repeat, a repeat refused on its own; the
 *   admin schemas are strict, so an unknown (say misspelt) filter is refused too.
 */
export type QueryRule = 'lenient' | 'declared-once' | 'every-once';

/**
 * Reads and validates a query string against a route's schema (values arrive as strings).
 *
 * @param schema - the route's query schema.
 * @param search - the query string as received, with its `?` (or `''`).
 * @param rule - how strict the route is (see {@link QueryRule}).
 * @returns the schema's output.
 * @throws {HttpError} 400 `validation_failed` "The query string is invalid" with every
 *   issue, each naming its parameter (`Expected a single value` for a repeat).
 *
 * @example
 * ```ts
 * const { deep } = readQuery(HealthQuerySchema, new URL(request.url).search, 'declared-once');
 * ```
 */
export function readQuery<const Schema extends v.GenericSchema>(
  schema: Schema,
  search: string,
  rule: QueryRule,
): v.InferOutput<Schema> {
  const declared = 'entries' in schema ? (schema.entries as Record<string, unknown>) : {};
  const counted = (name: string) => rule === 'every-once' || Object.hasOwn(declared, name);
  const values = new Map<string, string>();
  const repeats: string[] = [];
  for (const [name, value] of new URLSearchParams(search)) {
    if (!values.has(name)) values.set(name, value);
    else if (counted(name) && !repeats.includes(name)) repeats.push(name);
  }
  // The admin API has always named repeats in the order the parameters first appear.
  const ordered =
    rule === 'every-once' ? [...values.keys()].filter((name) => repeats.includes(name)) : repeats;
  const repeated = ordered.map(
    (path): ErrorIssue => ({ path, message: 'Expected a single value' }),
  );
  if (repeated.length > 0 && rule !== 'lenient') throw invalidQuery(repeated);
  const result = v.safeParse(schema, Object.fromEntries(values));
  const issues = [...repeated, ...(result.success ? [] : requestIssues(result.issues))];
  if (issues.length > 0 || !result.success) throw invalidQuery(issues);
  return result.output;
}

function invalidQuery(issues: readonly ErrorIssue[]): HttpError {
  return new HttpError(400, 'validation_failed', 'The query string is invalid', { issues });
}
