import type { RequestContext } from '../http/context.ts';
import { HttpError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import type { CallerRateLimiter } from './caller-rate-limiter.ts';
import { clientBucket } from './client-bucket.ts';

/** The binding of the rate limiter Durable Object (wrangler.toml `RATE_LIMITER`). */
interface RateLimitBindings {
  readonly RATE_LIMITER?: DurableObjectNamespace<CallerRateLimiter>;
}

/**
 * Counts the request against its caller's `RATE_LIMIT_PER_MINUTE` (429 `rate_limited`
 * with `Retry-After` over it), nothing when the limit is `0`. When the limiter itself
 * fails (binding missing, object unreachable) the request goes on and the fault is
 * logged: the limit protects the upstream, and an outage of the limiter must not become
 * an outage of payments.
 *
 * @param env - the Worker's bindings.
 * @param limit - `RATE_LIMIT_PER_MINUTE` from the settings: requests per minute, `0` for off.
 * @param context - the request's context (caller name, request id).
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` (whole seconds, at least 1).
 */
export async function enforceRateLimit(
  env: RateLimitBindings,
  limit: number,
  context: RequestContext,
): Promise<void> {
  if (limit === 0 || context.caller === undefined) return;
  await take(env, context.caller, limit, context.requestId, { caller: context.caller });
}

/**
 * Counts a request to the webhook ingress against `WEBHOOK_RATE_LIMIT_PER_MINUTE` of its
 * client address (IPv4 per address, IPv6 per /64, see {@link clientBucket}), before its body
 * is read; nothing when the limit is `0`. A limiter that fails lets the webhook in (logged):
 * refusing would delay money events for as long as the limiter is down.
 *
 * @param env - the Worker's bindings.
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
  await take(env, `webhooks:${client}`, limit, requestId, { client });
}

// Takes one request from the limiter object `name`; a failing limiter is logged and lets it in.
async function take(
  env: RateLimitBindings,
  name: string,
  limit: number,
  requestId: string,
  subject: Record<string, string>,
): Promise<void> {
  let decision: { allowed: boolean; retryAfterMs: number };
  try {
    if (env.RATE_LIMITER === undefined) throw new Error('the RATE_LIMITER binding is missing');
    decision = await env.RATE_LIMITER.getByName(name).take(limit);
  } catch (error) {
    logEvent('error', 'rate_limiter_failed', {
      request_id: requestId,
      ...subject,
      error_message: error instanceof Error ? error.message : String(error),
    });
    return;
  }
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new HttpError(
    429,
    'rate_limited',
    `Too many requests: the limit is ${limit} per minute; retry in ${retryAfter} s`,
    { headers: { 'Retry-After': String(retryAfter) } },
  );
}
