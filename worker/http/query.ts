// Query strings as the gateway reads them: one reader for every route (the proxy, the
// health check, the admin API), each route choosing how strict it is.
import * as v from 'valibot';
import { requestIssues } from '../../lib/shared.ts';
import { type ErrorIssue, HttpError } from './errors.ts';

/**
 * How strictly a route reads its query string:
 * - `declared-only` (the proxied routes): every parameter must be one the schema declares
 *   and appear once; an undeclared one ("Unknown field") and a repeat are listed with the
 *   schema's issues. The query is forwarded as received, so anything the gateway did not
 *   check would reach the payment service, and would make a cached answer differ from
 *   what its key says it is.
 * - `declared-once` (the health check): a parameter the schema declares may appear once,
 *   its first value is read, a repeat refused on its own before the schema runs; an
 *   undeclared one is ignored (a load balancer's cache-buster).
 * - `every-once` (the admin API): no parameter may repeat, a repeat refused on its own; the
 *   admin schemas are strict, so an unknown (say misspelt) filter is refused too.
 */
export type QueryRule = 'declared-only' | 'declared-once' | 'every-once';

/**
 * Reads and validates a query string against a route's schema (values arrive as strings).
 *
 * @param schema - the route's query schema.
 * @param search - the query string as received, with its `?` (or `''`).
 * @param rule - how strict the route is (see {@link QueryRule}).
 * @returns the schema's output.
 * @throws {HttpError} 400 `validation_failed` "The query string is invalid" with every
 *   issue, each naming its parameter (`Expected a single value` for a repeat, `Unknown
 *   field` for a parameter the schema does not declare under `declared-only`).
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
  const unknown: ErrorIssue[] = [];
  for (const [name, value] of new URLSearchParams(search)) {
    if (!values.has(name)) {
      values.set(name, value);
      if (rule === 'declared-only' && !Object.hasOwn(declared, name)) {
        unknown.push({ path: name, message: 'Unknown field' });
      }
    } else if (counted(name) && !repeats.includes(name)) repeats.push(name);
  }
  // The admin API has always named repeats in the order the parameters first appear.
  const ordered =
    rule === 'every-once' ? [...values.keys()].filter((name) => repeats.includes(name)) : repeats;
  const repeated = ordered.map(
    (path): ErrorIssue => ({ path, message: 'Expected a single value' }),
  );
  if (repeated.length > 0 && rule !== 'declared-only') throw invalidQuery(repeated);
  const result = v.safeParse(schema, Object.fromEntries(values));
  const issues = [...unknown, ...repeated, ...(result.success ? [] : requestIssues(result.issues))];
  if (issues.length > 0 || !result.success) throw invalidQuery(issues);
  return result.output;
}

function invalidQuery(issues: readonly ErrorIssue[]): HttpError {
  return new HttpError(400, 'validation_failed', 'The query string is invalid', { issues });
}
