// The deep health check (`GET /healthz?deep=1`): one cheap probe per dependency, run in
// parallel, each bounded by its own timeout, each failure reduced to a short message
// written here (never an error's own text, which may name URLs or carry a stack).
import {
  APIError,
  ConnectionError,
  ResponseValidationError,
  TimeoutError,
} from '../../lib/index.ts';
import { untilAborted } from '../../lib/shared.ts';
import { settingsOf } from '../config.ts';
import { shardDatabase } from '../db/shard-bindings.ts';
import { everyShard } from '../db/shards.ts';
import { logEvent } from '../http/log.ts';
import { upstreamClient } from '../upstream/sdk.ts';

/** The dependencies the deep check probes, in the order the response lists them. */
export type HealthCheckName = 'd1' | 'kv' | 'queue' | 'upstream';

/** The outcome of one probe. */
interface HealthCheckResult {
  readonly status: 'ok' | 'error';
  /** Time from the probe's start to its outcome (or to its timeout), in whole milliseconds. */
  readonly latency_ms: number;
  /** With `status: 'error'`: what failed, in a few words; never a secret, URL or stack. */
  readonly error?: string;
}

/** The deep check's answer body: `degraded` as soon as one probe failed. */
export interface DeepHealth {
  readonly status: 'ok' | 'degraded';
  readonly checks: Readonly<Record<HealthCheckName, HealthCheckResult>>;
}

/**
 * Timeout of each probe, in milliseconds. The upstream's is further capped by
 * `UPSTREAM_TIMEOUT_MS`, so the check never waits longer than a proxied request would.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const HEALTH_CHECK_TIMEOUTS_MS: Readonly<Record<HealthCheckName, number>> = Object.freeze({
  d1: 2_000,
  kv: 2_000,
  queue: 1_000,
  upstream: 5_000,
});

/** The KV key the probe reads; it need not exist (a miss is a successful read). */
const KV_PROBE_KEY = 'health:probe';

/** A probe's failure with a message safe to show the admin (written here, not passed through). */
class HealthCheckFailedError extends Error {
  override name = 'HealthCheckFailedError';
}

type Probe = (env: Env, timeoutMs: number, requestId: string) => Promise<void>;

const PROBES: Readonly<Record<HealthCheckName, Probe>> = {
  // A read of a real table in every database `D1_SHARDS` names (`DB` alone by default): it
  // proves each answers and that the migrations ran on each.
  d1: async (env) => {
    const names = everyShard(settingsOf(env).shards);
    await Promise.all(names.map((name) => probeShard(env, name, names.length > 1)));
  },
  kv: async (env) => {
    await env.CACHE.get(KV_PROBE_KEY);
  },
  // Presence only: sending would put a message in front of the delivery consumer. The
  // dead-letter queue has no producer binding (wrangler.toml names it on the consumer).
  queue: async (env) => {
    const queue: Queue | undefined = env.DELIVERIES;
    if (typeof queue?.send !== 'function') {
      throw new HealthCheckFailedError('DELIVERIES binding missing');
    }
  },
  upstream: async (env, timeoutMs, requestId) => {
    try {
      await upstreamClient(env).banks.list({}, { timeoutMs, requestId });
    } catch (error) {
      throw new HealthCheckFailedError(upstreamFailure(error, timeoutMs), { cause: error });
    }
  },
};

/** Reads one shard; with several, a failure names the binding (never more). */
async function probeShard(env: Env, name: string, several: boolean): Promise<void> {
  const which = several ? ` (${name})` : '';
  let db: D1Database;
  try {
    db = shardDatabase(env, name);
  } catch (error) {
    throw new HealthCheckFailedError(`D1 binding missing${which}`, { cause: error });
  }
  try {
    await db.prepare('SELECT 1 FROM webhook_events LIMIT 1').first();
  } catch (error) {
    throw new HealthCheckFailedError(`D1 read failed${which}`, { cause: error });
  }
}

/**
 * Runs every probe at once: D1 reads a real table in every shard, KV reads a key that need not exist,
 * the `DELIVERIES` queue producer must be bound (nothing is sent), and the upstream must
 * answer `GET /banks` through the gateway's SDK client (unsigned, not retried, sent with
 * the request's id). A failed probe is logged (`health_check_failed`) and answered with
 * a short message; a probe past its timeout is reported as failed and no longer awaited.
 *
 * @param env - the Worker's bindings.
 * @param requestId - the request's `X-Request-Id`, sent upstream and logged.
 * @param timeoutsMs - each probe's timeout in milliseconds. @default HEALTH_CHECK_TIMEOUTS_MS
 * @returns the overall status and one result per probe; never rejects.
 */
export async function runDeepHealthChecks(
  env: Env,
  requestId: string,
  timeoutsMs: Readonly<Record<HealthCheckName, number>> = HEALTH_CHECK_TIMEOUTS_MS,
): Promise<DeepHealth> {
  const names = Object.keys(PROBES) as HealthCheckName[];
  const results = await Promise.all(
    names.map((name) => runProbe(name, env, probeTimeout(name, env, timeoutsMs), requestId)),
  );
  const checks = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<
    HealthCheckName,
    HealthCheckResult
  >;
  const failed = results.some((result) => result.status === 'error');
  return { status: failed ? 'degraded' : 'ok', checks };
}

function probeTimeout(
  name: HealthCheckName,
  env: Env,
  timeoutsMs: Readonly<Record<HealthCheckName, number>>,
): number {
  if (name !== 'upstream') return timeoutsMs[name];
  // The deep check runs only with valid settings (the health route checks them first).
  return Math.min(timeoutsMs.upstream, settingsOf(env).upstream.timeoutMs);
}

async function runProbe(
  name: HealthCheckName,
  env: Env,
  timeoutMs: number,
  requestId: string,
): Promise<HealthCheckResult> {
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    await untilAborted(
      PROBES[name](env, timeoutMs, requestId),
      controller.signal,
      () => new HealthCheckFailedError(`no answer within ${timeoutMs} ms`),
    );
    return { status: 'ok', latency_ms: Date.now() - started };
  } catch (error) {
    const message =
      error instanceof HealthCheckFailedError ? error.message : `${FAILURE_LABEL[name]} failed`;
    const cause = error instanceof HealthCheckFailedError ? error.cause : error;
    logEvent('warn', 'health_check_failed', {
      request_id: requestId,
      check: name,
      error: message,
      error_name: cause instanceof Error ? cause.name : typeof cause,
    });
    return { status: 'error', latency_ms: Date.now() - started, error: message };
  } finally {
    clearTimeout(timer);
  }
}

const FAILURE_LABEL: Readonly<Record<HealthCheckName, string>> = {
  d1: 'D1 read',
  kv: 'KV read',
  queue: 'Queue check',
  upstream: 'GET /banks',
};

// The SDK's messages name the method and full URL; the admin gets the kind of failure.
function upstreamFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof TimeoutError) return `no answer within ${timeoutMs} ms`;
  if (error instanceof ConnectionError) return 'GET /banks could not connect';
  if (error instanceof APIError) return `GET /banks answered HTTP ${error.status}`;
  if (error instanceof ResponseValidationError) return 'GET /banks answered an unexpected body';
  return 'GET /banks failed';
}
