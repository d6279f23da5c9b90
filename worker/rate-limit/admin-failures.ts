// Failed admin sign-ins, counted per client address in the rate limiter Durable Object, so
// the admin token cannot be guessed at the speed of the network.
import type { RequestContext } from '../http/context.ts';
import { HttpError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import type { CallerRateLimiter } from './caller-rate-limiter.ts';

/** Failed admin sign-ins allowed per client address: a burst of 10, then one every 6 s. */
export const ADMIN_FAILURES_PER_MINUTE = 10;

/** Prefix of the limiter's object names, apart from caller names. */
const OBJECT_PREFIX = 'admin-failures/';

/** The bindings the throttle reads. */
interface AdminFailureBindings {
  readonly RATE_LIMITER?: DurableObjectNamespace<CallerRateLimiter>;
}

/**
 * The throttle of one client address's failed admin sign-ins. `check` runs before the
 * token is compared (a throttled address is refused whatever it sends, so a right guess
 * is worth nothing while throttled); `fail` counts a wrong token. A limiter that cannot be
 * reached is logged and lets the request through: the token check still stands.
 */
export interface AdminFailureThrottle {
  /** @throws {HttpError} 429 `rate_limited` with `Retry-After` while the address is throttled. */
  check(): Promise<void>;
  /**
   * Counts one failed sign-in.
   * @throws {HttpError} 429 `rate_limited` with `Retry-After` when it is one too many.
   */
  fail(): Promise<void>;
}

/**
 * The throttle of the request's client address (`CF-Connecting-IP`, which Cloudflare sets
 * and a client cannot; `unknown` without it, as under local tools, so they share one count).
 *
 * @param env - the bindings: `RATE_LIMITER`.
 * @param headers - the request headers.
 * @param context - the request's context (request id, for the logs).
 * @returns the throttle.
 */
export function adminFailureThrottle(
  env: AdminFailureBindings,
  headers: Headers,
  context: RequestContext,
): AdminFailureThrottle {
  const client = headers.get('CF-Connecting-IP') ?? 'unknown';
  const ask = async (method: 'peek' | 'take'): Promise<void> => {
    let decision: { allowed: boolean; retryAfterMs: number };
    try {
      if (env.RATE_LIMITER === undefined) throw new Error('the RATE_LIMITER binding is missing');
      const limiter = env.RATE_LIMITER.getByName(`${OBJECT_PREFIX}${client}`);
      decision = await limiter[method](ADMIN_FAILURES_PER_MINUTE);
    } catch (error) {
      logEvent('error', 'rate_limiter_failed', {
        request_id: context.requestId,
        limit: 'admin_failures',
        error_message: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    if (decision.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    logEvent('warn', 'admin_sign_in_throttled', {
      request_id: context.requestId,
      client,
      retry_after_sec: retryAfter,
    });
    throw new HttpError(
      429,
      'rate_limited',
      `Too many failed admin sign-ins from this address; retry in ${retryAfter} s`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  };
  return { check: () => ask('peek'), fail: () => ask('take') };
}
