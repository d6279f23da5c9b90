// Failed admin sign-ins, counted in the rate limiter Durable Object per client address and
// for the whole gateway, so the admin token cannot be guessed at the speed of the network.
import { bytesToHex } from '../../lib/shared.ts';
import type { RequestContext } from '../http/context.ts';
import { HttpError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import type { CallerRateLimiter } from './caller-rate-limiter.ts';
import { clientBucket } from './client-bucket.ts';

/**
 * Failed admin sign-ins allowed per client address: a burst of 10, then one every 6 s.
 *
 * @internal Exported for the tests, which count refusals against the same budget.
 */
export const ADMIN_FAILURES_PER_MINUTE = 10;

/**
 * Failed admin sign-ins allowed across the whole gateway, every address together: a burst
 * of 120, then one every 0.5 s. It caps a guesser spreading over many addresses.
 *
 * @internal Exported for the tests, which count refusals against the same budget.
 */
export const ADMIN_FAILURES_PER_MINUTE_GLOBAL = 120;

/** `Retry-After` while the limiter cannot be reached, in seconds. */
const LIMITER_FAULT_RETRY_AFTER_SEC = 10;

/** A count of failed sign-ins: its limiter object's name and its limit per minute. */
interface FailureBudget {
  /** Whose failures: one client address (or /64), or the whole gateway. */
  readonly scope: 'address' | 'gateway';
  /** The limiter object's name (`admin-failures/...`, apart from caller names). */
  readonly name: string;
  /** Failures per minute. */
  readonly limit: number;
}

const GLOBAL_BUDGET: FailureBudget = {
  scope: 'gateway',
  name: 'admin-failures/global',
  limit: ADMIN_FAILURES_PER_MINUTE_GLOBAL,
};

/**
 * Until when this isolate knows the gateway's budget to be spent, epoch milliseconds, by
 * limiter binding (the tests give each test a binding of its own). While it is, a sign-in is
 * refused after one call, which counts it in its address's budget.
 */
const gatewaySpent = new WeakMap<object, number>();

/**
 * Shortest time an isolate takes the gateway's budget for spent once it refused, in
 * milliseconds: the budget refills a slot every 0.5 s, and asking it again for each one
 * would cost a flood three calls a request; meanwhile only more is refused, never less.
 */
const GATEWAY_SPENT_MIN_MS = 5000;

/** The bindings the throttle reads. */
interface AdminFailureBindings {
  readonly RATE_LIMITER?: DurableObjectNamespace<CallerRateLimiter>;
}

/** A failed sign-in reserved before the token is compared. */
export interface AdminSignInSlot {
  /**
   * Ends the reservation once the token is compared: `refund` gives it back (the token
   * was right, so nothing failed), `keep` leaves it counted (a failed sign-in). Never
   * throws (a release that cannot be made is logged: the count is only higher than it
   * should be).
   */
  release(outcome: 'refund' | 'keep'): Promise<void>;
}

/**
 * Reserves one failed sign-in in the client address's budget ({@link ADMIN_FAILURES_PER_MINUTE}),
 * then in the gateway's ({@link ADMIN_FAILURES_PER_MINUTE_GLOBAL}), before the token is
 * compared: each reservation is one Durable Object call that checks and counts at once,
 * so concurrent guesses cannot all pass a check none of them has counted yet, and no more
 * tokens are compared than the budgets hold. Concurrent requests presenting the same
 * `Authorization` value share one reservation (the object knows it by a SHA-256 digest,
 * never the token), so an operator's parallel requests with the right token hold one slot
 * together and cannot refuse each other. A refused request compares nothing, the right
 * token included (a throttled guesser learns nothing from a lucky guess). The address goes
 * first, so one throttled address cannot spend the gateway's budget. Once the gateway's
 * budget refuses, the address keeps the failure counted and this isolate remembers the
 * budget spent until it refills: each sign-in meanwhile is one call, counted in its address's
 * budget (so a guesser's own address is throttled too), and refused. When the limiter cannot
 * be reached the request is refused too: an outage of the limiter must not reopen guessing.
 *
 * @param env - the bindings: `RATE_LIMITER`.
 * @param headers - the request headers (`Authorization`, whose value is digested, and
 *   `CF-Connecting-IP`, see {@link clientBucket}).
 * @param context - the request's context (request id, for the logs).
 * @returns the reservation; call `release` once the token is compared.
 * @throws {HttpError} 429 `rate_limited` with `Retry-After` (whole seconds, at least 1)
 *   when a budget is spent or the limiter fails.
 */
export async function reserveAdminSignIn(
  env: AdminFailureBindings,
  headers: Headers,
  context: RequestContext,
): Promise<AdminSignInSlot> {
  const client = clientBucket(headers);
  const address: FailureBudget = {
    scope: 'address',
    name: `admin-failures/client/${client}`,
    limit: ADMIN_FAILURES_PER_MINUTE,
  };
  const limiter = env.RATE_LIMITER;
  if (limiter === undefined) {
    throw limiterFailed(context, new Error('the RATE_LIMITER binding is missing'));
  }
  const spentUntil = gatewaySpent.get(limiter) ?? 0;
  if (Date.now() < spentUntil) {
    throw await refusedWhileSpent(limiter, address, spentUntil, { context, client });
  }
  const credential = await credentialDigest(headers.get('Authorization') ?? '');
  const held: FailureBudget[] = [];
  const release = (outcome: 'refund' | 'keep') =>
    releaseAll(limiter, held, credential, outcome, context);
  for (const budget of [address, GLOBAL_BUDGET]) {
    let decision: { allowed: boolean; retryAfterMs: number };
    try {
      decision = await limiter.getByName(budget.name).reserve(budget.limit, credential);
    } catch (error) {
      await release('refund');
      throw limiterFailed(context, error);
    }
    if (!decision.allowed) {
      const gateway = budget.scope === 'gateway';
      // The gateway's budget is taken for spent a while: its Retry-After says so too.
      const waitMs = gateway
        ? Math.max(decision.retryAfterMs, GATEWAY_SPENT_MIN_MS)
        : decision.retryAfterMs;
      if (gateway) gatewaySpent.set(limiter, Date.now() + waitMs);
      // Refused by the gateway's budget, the attempt still counts for its address.
      await release(gateway ? 'keep' : 'refund');
      throw throttled(context, client, budget, waitMs);
    }
    held.push(budget);
  }
  return { release };
}

/**
 * A sign-in while this isolate knows the gateway's budget spent: one call counts it in its
 * address's budget; the 429 names the address when that budget is spent too, else the
 * gateway.
 */
async function refusedWhileSpent(
  limiter: DurableObjectNamespace<CallerRateLimiter>,
  address: FailureBudget,
  spentUntil: number,
  { context, client }: { readonly context: RequestContext; readonly client: string },
): Promise<HttpError> {
  let decision: { allowed: boolean; retryAfterMs: number };
  try {
    decision = await limiter.getByName(address.name).take(address.limit);
  } catch (error) {
    return limiterFailed(context, error);
  }
  if (!decision.allowed) return throttled(context, client, address, decision.retryAfterMs);
  return throttled(context, client, GLOBAL_BUDGET, spentUntil - Date.now());
}

/** The SHA-256 of an `Authorization` value, hex: names its reservation, reveals nothing. */
async function credentialDigest(authorization: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(authorization));
  return bytesToHex(new Uint8Array(digest));
}

/** Releases every reservation in `held`, at once; failures are logged, never thrown. */
async function releaseAll(
  limiter: DurableObjectNamespace<CallerRateLimiter>,
  held: readonly FailureBudget[],
  credential: string,
  outcome: 'refund' | 'keep',
  context: RequestContext,
): Promise<void> {
  await Promise.all(
    held.map(async (budget) => {
      try {
        await limiter.getByName(budget.name).release(budget.limit, credential, outcome);
      } catch (error) {
        logEvent('error', 'rate_limiter_failed', {
          request_id: context.requestId,
          limit: 'admin_failures',
          operation: 'release',
          error_message: error instanceof Error ? error.message : String(error),
        });
      }
    }),
  );
}

/** The 429 of a spent budget, logged. */
function throttled(
  context: RequestContext,
  client: string,
  budget: FailureBudget,
  retryAfterMs: number,
): HttpError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  logEvent('warn', 'admin_sign_in_throttled', {
    request_id: context.requestId,
    client,
    scope: budget.scope,
    retry_after_sec: retryAfter,
  });
  const where = budget.scope === 'address' ? 'from this address' : 'to this gateway';
  return new HttpError(
    429,
    'rate_limited',
    `Too many failed admin sign-ins ${where}; retry in ${retryAfter} s`,
    { headers: { 'Retry-After': String(retryAfter) } },
  );
}

/** The 429 of a limiter that cannot be reached (fail closed), logged. */
function limiterFailed(context: RequestContext, error: unknown): HttpError {
  logEvent('error', 'rate_limiter_failed', {
    request_id: context.requestId,
    limit: 'admin_failures',
    operation: 'reserve',
    error_message: error instanceof Error ? error.message : String(error),
  });
  return new HttpError(
    429,
    'rate_limited',
    `Failed admin sign-ins cannot be counted right now; retry in ${LIMITER_FAULT_RETRY_AFTER_SEC} s`,
    { headers: { 'Retry-After': String(LIMITER_FAULT_RETRY_AFTER_SEC) }, cause: error },
  );
}
