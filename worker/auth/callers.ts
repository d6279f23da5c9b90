import * as v from 'valibot';
import { timingSafeEqual } from '../../lib/shared.ts';
import { RouteAllowListSchema } from './allow-list.ts';

// Bearer tokens are visible ASCII (RFC 6750 b64token is a subset); whitespace could never match.
const TOKEN = /^[\x21-\x7E]+$/;

/**
 * `GATEWAY_CALLERS` once parsed from JSON: an array of `{ name, token, routes? }` with
 * unique names and tokens (worker/config.ts reads the secret with it).
 */
export const CallersSchema = v.pipe(
  v.array(
    v.object({
      name: v.pipe(v.string(), v.nonEmpty()),
      token: v.pipe(v.string(), v.regex(TOKEN)),
      // Optional allow-list of route names (`banks.list`, `payments.*`, `*`); absent = all.
      routes: v.optional(RouteAllowListSchema),
    }),
  ),
  v.check(
    (callers) => new Set(callers.map((caller) => caller.token)).size === callers.length,
    'two callers share a token',
  ),
  // Idempotency keys, rate limits and logs are scoped by name: names must be unique.
  v.check(
    (callers) => new Set(callers.map((caller) => caller.name)).size === callers.length,
    'two callers share a name',
  ),
);

/**
 * A caller of the gateway, one entry of the `GATEWAY_CALLERS` secret:
 * `name`, `token`, and optionally `routes`, the compiled allow-list (absent: every route).
 */
export type Caller = v.InferOutput<typeof CallersSchema>[number];

/**
 * The caller whose token equals `token`. Every configured token is compared in
 * constant time, with no early exit, so the timing reveals neither which caller nor
 * how many characters matched.
 *
 * @param callers - the configured callers.
 * @param token - the presented bearer token.
 * @returns the matching caller, or `undefined`.
 */
export function findCaller(callers: readonly Caller[], token: string): Caller | undefined {
  let found: Caller | undefined;
  for (const caller of callers) {
    if (timingSafeEqual(caller.token, token) && found === undefined) found = caller;
  }
  return found;
}
