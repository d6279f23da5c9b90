import * as v from 'valibot';
import { timingSafeEqual } from '../../lib/shared.ts';
import { InternalError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { PROXY_ROUTES } from '../routes/table.ts';
import { compileAllowList, RouteAllowListSchema } from './allow-list.ts';

// Bearer tokens are visible ASCII (RFC 6750 b64token is a subset); whitespace could never match.
const TOKEN = /^[\x21-\x7E]+$/;

const CallersSchema = v.pipe(
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

type Parsed = { raw: string; callers: readonly Caller[] } | { raw: string; problem: string };

let parsed: Parsed | undefined;

/**
 * The callers configured in `GATEWAY_CALLERS` (a JSON array of `{ name, token, routes? }`),
 * parsed once per isolate and cached by the string value. A malformed value is
 * logged once (without the value: it holds tokens) and fails every protected request;
 * an allow-list pattern that matches no route is logged once as a warning (a typo).
 *
 * @param raw - the secret's value.
 * @returns the callers (possibly none: then nobody is let in).
 * @throws {InternalError} when the value is missing or malformed (500 `internal_error`).
 */
export function loadCallers(raw: string | undefined): readonly Caller[] {
  const value = raw ?? '';
  if (parsed === undefined || parsed.raw !== value) {
    parsed = parseCallers(value);
    if ('problem' in parsed) {
      logEvent('error', 'config_invalid', { setting: 'GATEWAY_CALLERS', problem: parsed.problem });
    } else {
      warnUnmatchedPatterns(parsed.callers);
    }
  }
  if ('problem' in parsed) throw new InternalError(`GATEWAY_CALLERS: ${parsed.problem}`);
  return parsed.callers;
}

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

/**
 * The caller named `name` (names are unique, see {@link loadCallers}).
 *
 * @param callers - the configured callers.
 * @param name - a caller name, as recorded on the request context.
 * @returns the caller, or `undefined`.
 */
export function findCallerByName(callers: readonly Caller[], name: string): Caller | undefined {
  return callers.find((caller) => caller.name === name);
}

function warnUnmatchedPatterns(callers: readonly Caller[]): void {
  for (const caller of callers) {
    for (const pattern of caller.routes?.patterns ?? []) {
      const single = compileAllowList([pattern]);
      if (!PROXY_ROUTES.some((route) => single.allows(route.name))) {
        logEvent('warn', 'config_warning', {
          setting: 'GATEWAY_CALLERS',
          caller: caller.name,
          problem: `route pattern ${pattern} matches no route`,
        });
      }
    }
  }
}

function parseCallers(raw: string): Parsed {
  if (raw.trim() === '') return { raw, problem: 'not set' };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    // The parser's message quotes the input, which holds tokens: never log it.
    return { raw, problem: 'not valid JSON' };
  }
  const result = v.safeParse(CallersSchema, json);
  if (result.success) return { raw, callers: result.output };
  // Paths and expectations only: issue messages may quote received values (tokens).
  const issues = result.issues.map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join('.') ?? '';
    // Our own checks' messages are fixed strings (never a received value).
    const { type, expected }: { type: string; expected: string | null } = issue;
    if (type === 'check') return `${path || '(root)'}: ${issue.message}`;
    return `${path || '(root)'}: expected ${expected ?? type}`;
  });
  return {
    raw,
    problem: `expected a JSON array of { name, token, routes? } (${issues.join('; ')})`,
  };
}
