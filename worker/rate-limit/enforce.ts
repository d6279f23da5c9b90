import { settingsOf } from '../config.ts';
import { type RequestContext, settingsIn } from '../http/context.ts';
import { HttpError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import type { CallerRateLimiter } from './caller-rate-limiter.ts';
import { clientBucket } from './client-bucket.ts';
import { knownRefusal, rememberRefusal } from './refusals.ts';
import { type LimiterShare, nextShare } from './spread.ts';

/** The binding of the rate limiter Durable Object (wrangler.toml `RATE_LIMITER`). */
interface RateLimitBindings {
  readonly RATE_LIMITER?: DurableObjectNamespace<CallerRateLimiter>;
}

/**
 * Counts the request against its caller's `RATE_LIMIT_PER_MINUTE` (429 `rate_limited`
 * with `Retry-After` over it), nothing when the limit is `0`. A limit above
 * `RATE_LIMIT_PER_OBJECT_PER_MINUTE` is spread over several limiter objects (see
 * {@link nextShare}), so one object's throughput never holds a caller below its limit.
 * When the limiter itself fails (binding missing, object unreachable) the request goes on
 * and the fault is logged: the limit protects the upstream, and an outage of the limiter
 * must not become an outage of payments.
 *
 * @param env - the Worker's bindings.
 * @param limit - `RATE_LIMIT_PER_MINUTE` from the settings: requests per minute, `0` for off.
 * @param context - the request's context (caller name, request id, settings).
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` (whole seconds, at least 1).
 */
export async function enforceRateLimit(
  env: RateLimitBindings,
  limit: number,
  context: RequestContext,
): Promise<void> {
  if (limit === 0 || context.caller === undefined) return;
  const perObject = settingsIn(context).rateLimitPerObjectPerMinute;
  // `caller/` keeps a caller's objects apart from the other counts the namespace holds: a
  // caller named `admin-failures/global` must not spend the admin sign-in budget.
  const share = nextShare(`caller/${context.caller}`, limit, perObject);
  await take(env, share, limit, context.requestId, { caller: context.caller });
}

/**
 * Counts a request to the webhook ingress against `WEBHOOK_RATE_LIMIT_PER_MINUTE` of its
 * client address (IPv4 per address, IPv6 per /64, see {@link clientBucket}), before its body
 * is read; nothing when the limit is `0`. A limit above `RATE_LIMIT_PER_OBJECT_PER_MINUTE`
 * is spread over several limiter objects, as a caller's. A limiter that fails lets the
 * webhook in (logged): refusing would delay money events for as long as the limiter is down.
 *
 * @param env - the Worker's bindings (its settings are read from them, already loaded).
 * @param limit - requests per minute per address, `0` for off.
 * @param headers - the request's headers (`CF-Connecting-IP`).
 * @param requestId - for the log line.
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` (whole seconds, at least 1),
 *   which a provider treats as "retry later".
 */
export async function enforceWebhookRateLimit(
  env: RateLimitBindings,
  limit: number,
  headers: Headers,
  requestId: string,
): Promise<void> {
  if (limit === 0) return;
  const client = clientBucket(headers);
  const perObject = settingsOf(env).rateLimitPerObjectPerMinute;
  const share = nextShare(`webhooks:${client}`, limit, perObject);
  await take(env, share, limit, requestId, { client });
}

// Takes one request from the share's limiter object, unless this isolate already knows the
// object refuses it (see refusals.ts); a failing limiter is logged and lets it in. The
// refusal names the whole limit: the caller knows no shares.
async function take(
  env: RateLimitBindings,
  share: LimiterShare,
  limit: number,
  requestId: string,
  subject: Record<string, string>,
): Promise<void> {
  const limiter = env.RATE_LIMITER;
  const known = limiter === undefined ? undefined : knownRefusal(limiter, share.name, share.limit);
  if (known !== undefined) throw refusal(limit, known);
  let decision: { allowed: boolean; retryAfterMs: number };
  const askedAt = Date.now();
  try {
    if (limiter === undefined) throw new Error('the RATE_LIMITER binding is missing');
    decision = await limiter.getByName(share.name).take(share.limit);
  } catch (error) {
    logEvent('error', 'rate_limiter_failed', {
      request_id: requestId,
      ...subject,
      limiter_object: share.name,
      error_message: error instanceof Error ? error.message : String(error),
    });
    return;
  }
  if (decision.allowed) return;
  if (limiter !== undefined) {
    rememberRefusal(limiter, share.name, share.limit, askedAt, decision.retryAfterMs);
  }
  throw refusal(limit, decision.retryAfterMs);
}

/** The 429 of a spent limit, with the wait in whole seconds (at least 1). */
function refusal(limit: number, retryAfterMs: number): HttpError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new HttpError(
    429,
    'rate_limited',
    `Too many requests: the limit is ${limit} per minute; retry in ${retryAfter} s`,
    { headers: { 'Retry-After': String(retryAfter) } },
  );
}
