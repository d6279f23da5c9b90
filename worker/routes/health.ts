import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { checkAdminToken, requireAdmin } from '../auth/admin.ts';
import { CROSS_RULES, loadSettings, SETTINGS, type SettingName } from '../config.ts';
import { runDeepHealthChecks } from '../health/checks.ts';
import { contextOf } from '../http/context.ts';
import { UnauthorizedError } from '../http/errors.ts';
import { jsonResponse } from '../http/respond.ts';

/** Path of the health check; open (no bearer token) unless `?deep=1`. */
export const HEALTH_PATH = '/healthz';

/**
 * The `GET /healthz` query, values as strings: `deep` is `1` (the deep check, admin
 * token required) or `0` (the same as leaving it out). Other parameters are ignored, so
 * a load balancer's cache-buster never turns a liveness probe into a 400.
 */
export const HealthQuerySchema = v.pipe(
  v.object({ deep: v.optional(v.picklist(['0', '1'], 'Expected 0 or 1')) }),
  v.description(
    'Without `deep=1`: a liveness check that needs no token and touches nothing. With ' +
      '`deep=1`: the admin token is required, and D1, KV, the deliveries queue binding and ' +
      'the upstream (`GET /banks`) are probed in parallel; 503 `degraded` when one fails.',
  ),
);

/** The outcome of one probe of the deep check; `latency_ms` in milliseconds. */
const HealthCheckSchema = v.object({
  status: v.picklist(['ok', 'error']),
  latency_ms: v.pipe(v.number(), v.integer(), v.minValue(0)),
  error: v.optional(v.string()),
});

/**
 * `GET /healthz`'s body: `{ status: 'ok' }`, plus `checks` with `?deep=1` (then `status`
 * is `degraded`, with 503, when a probe failed); with invalid settings, 503
 * `{ status: 'misconfigured' }`, plus `invalid_settings` (the variables' names, never
 * their values) for `?deep=1` with the admin token only.
 */
export const HealthResponseSchema = v.object({
  status: v.picklist(['ok', 'degraded', 'misconfigured']),
  invalid_settings: v.optional(
    v.pipe(
      v.array(v.string()),
      v.description(
        'The invalid variables, by name (the log says what is wrong with each); only with ' +
          '`deep=1` and the admin token.',
      ),
    ),
  ),
  checks: v.optional(
    v.object({
      d1: HealthCheckSchema,
      kv: HealthCheckSchema,
      queue: HealthCheckSchema,
      upstream: HealthCheckSchema,
    }),
  ),
});

/**
 * `GET /healthz[?deep=1]`. While the settings are invalid it answers 503
 * `{ status: 'misconfigured' }` to anyone: a health check is polled by monitors and load
 * balancers that keep (and sometimes publish) what it answers, so it names no setting.
 * With `deep=1` and the admin token it adds `invalid_settings` (variable names, never
 * values); see {@link isAdminWhileInvalid} for how the token is checked then. Otherwise,
 * without `deep=1` it answers `{ status: 'ok' }` without touching the upstream or
 * storage, whatever token is sent. With `deep=1` it first requires the admin token (the
 * admin API's own guard, throttle of failed sign-ins included), then runs the deep check
 * (worker/health/checks.ts).
 *
 * The query (`deep`) is read before the handler runs and before the token: its values are
 * public (the OpenAPI document lists them), so a 400 tells an anonymous client nothing
 * the document does not.
 *
 * @param request - the incoming request.
 * @param env - the Worker's bindings.
 * @param query - the validated query.
 * @returns 503 `misconfigured` as above; 200 `{ status: 'ok' }`, or with `deep=1` 200 `{ status: 'ok', checks }` when
 *   every probe passed and 503 `{ status: 'degraded', checks }` otherwise.
 * @throws {HttpError} 401 and 429 from {@link requireAdmin} with `deep=1` (the row's query
 *   reader has already answered 400 `validation_failed` naming `deep` when it is not `0`
 *   or `1` or is given twice); 429 too with `deep=1` and a token while the settings are
 *   invalid (the same throttle).
 */
export async function health(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  query: v.InferOutput<typeof HealthQuerySchema>,
): Promise<Response> {
  const deep = query.deep === '1';
  const loaded = loadSettings(env);
  if (!loaded.ok) {
    const invalid = loaded.problems.map((problem) => problem.variable);
    const admin = deep && (await isAdminWhileInvalid(request, env, invalid));
    const body = admin ? { invalid_settings: invalid } : {};
    return jsonResponse({ status: 'misconfigured', ...body }, { status: 503 });
  }
  if (!deep) return jsonResponse({ status: 'ok' });
  await requireAdmin(request, env);
  const result = await runDeepHealthChecks(env, contextOf(request).requestId);
  return jsonResponse(result, { status: result.status === 'ok' ? 200 : 503 });
}

/**
 * The settings the admin token's own rules read besides itself (worker/config/
 * production-rules.ts): the mode (its production rules lift in local mode), the callers'
 * tokens (it must differ from each) and whatever its rules between settings read (the
 * provider's secrets). While one of them is invalid, a rule about the token went
 * unchecked, so the token is not trusted.
 */
const ADMIN_TOKEN_RULE_INPUTS: ReadonlySet<SettingName> = new Set<SettingName>([
  'ADMIN_TOKEN',
  'GATEWAY_MODE',
  'GATEWAY_CALLERS',
  ...CROSS_RULES.filter((rule) => rule.variable === 'ADMIN_TOKEN').flatMap((rule) => rule.reads),
]);

/**
 * Whether the request carries the admin token while the settings `invalid` names are
 * invalid, so it may read their names. The settings as a whole cannot be read, so the
 * admin token is read by its own row, and only when it and every setting its rules read
 * are valid: an admin token that is
 * itself invalid (or that a rule could not be checked against) opens nothing, and then no
 * one gets the names (the log has them). The token goes through the admin guard's check
 * (a failed sign-in reserved before the constant-time compare, given back when right).
 * Any token that is not accepted (missing, malformed, wrong, or no admin token to accept)
 * gets the same plain answer as no token, never a 401: so the answer never tells whether
 * the admin token is among the invalid settings, and a monitor sending a stale token
 * still reads 503 `misconfigured`.
 *
 * @throws {HttpError} 429 `rate_limited` when the failed sign-in budget is spent or the
 *   limiter cannot be reached (from {@link checkAdminToken}).
 */
async function isAdminWhileInvalid(
  request: IRequest,
  env: Env,
  invalid: readonly SettingName[],
): Promise<boolean> {
  const trusted = !invalid.some((name) => ADMIN_TOKEN_RULE_INPUTS.has(name));
  const read = v.safeParse(SETTINGS.ADMIN_TOKEN.schema, env.ADMIN_TOKEN);
  const expected = trusted && read.success ? read.output : undefined;
  try {
    await checkAdminToken(request, env, expected);
  } catch (error) {
    if (error instanceof UnauthorizedError) return false;
    throw error;
  }
  return true;
}
