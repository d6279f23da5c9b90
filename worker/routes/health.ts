import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { requireAdmin } from '../auth/admin.ts';
import { loadSettings } from '../config.ts';
import { runDeepHealthChecks } from '../health/checks.ts';
import { contextOf } from '../http/context.ts';
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
 * `{ status: 'misconfigured', invalid_settings }`, naming the variables only.
 */
export const HealthResponseSchema = v.object({
  status: v.picklist(['ok', 'degraded', 'misconfigured']),
  invalid_settings: v.optional(
    v.pipe(
      v.array(v.string()),
      v.description('The invalid variables, by name (the log says what is wrong with each).'),
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
 * `{ status: 'misconfigured', invalid_settings }` (variable names, never values), with or
 * without `deep=1`: no token can be checked then. Otherwise, without `deep=1` it answers
 * `{ status: 'ok' }` without touching the upstream or storage, whatever token is sent. With `deep=1` it first
 * requires the admin token (the admin API's own guard, throttle of failed sign-ins
 * included), then runs the deep check (worker/health/checks.ts).
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
 *   or `1` or is given twice).
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
    return jsonResponse({ status: 'misconfigured', invalid_settings: invalid }, { status: 503 });
  }
  if (!deep) return jsonResponse({ status: 'ok' });
  await requireAdmin(request, env);
  const result = await runDeepHealthChecks(env, contextOf(request).requestId);
  return jsonResponse(result, { status: result.status === 'ok' ? 200 : 503 });
}
