import type { IRequest } from 'itty-router';
import { resolveRequestId } from '../../lib/shared.ts';
import type { Caller } from '../auth/callers.ts';
import type { Settings } from '../config.ts';
import { type ErrorCode, InternalError } from './errors.ts';

/**
 * What the gateway knows about one request as it moves through the router stages;
 * read by the log line (and later by idempotency, allow-lists and rate limits).
 */
export interface RequestContext {
  /** Propagated or generated `X-Request-Id`. */
  readonly requestId: string;
  /** `Date.now()` when the request entered the gateway, in milliseconds. */
  readonly startedAt: number;
  /** Name of the authenticated caller (from `GATEWAY_CALLERS`); never the token. */
  caller: string | undefined;
  /**
   * The authenticated caller's entry of `GATEWAY_CALLERS` (its allow-list), set with
   * `caller` by the bearer authentication, so no later stage looks it up again.
   */
  callerEntry?: Caller;
  /**
   * The settings, read once by the router's settings step and read from here by every
   * later step (absent before it, and on the health check, which reports them itself).
   */
  settings?: Settings;
  /** Name of the matched route (e.g. `payments.initialize`), when one matched. */
  routeName: string | undefined;
  /** Status the upstream answered with, when the request was forwarded. */
  upstreamStatus: number | undefined;
  /** Code of the error the gateway answered with, when it answered one itself. */
  errorCode: ErrorCode | undefined;
  /**
   * What the idempotency stage did: `stored` (first use, answer kept), `replayed`,
   * `in_flight`, `reused` (other request), `recovered` (stale claim resolved), or `none`.
   */
  idempotency: 'stored' | 'replayed' | 'in_flight' | 'reused' | 'recovered' | 'none' | undefined;
  /** What the cache stage did: `hit`, `miss`, or `error` (the cache failed; served upstream). */
  cache: 'hit' | 'miss' | 'error' | undefined;
}

const CONTEXT = Symbol('edgepay.requestContext');

type WithContext = IRequest & { [CONTEXT]?: RequestContext };

/**
 * The context of `request`, created on first use (the `before` stage calls it first,
 * so `startedAt` is the arrival time; the `catch` stage can always rely on it).
 *
 * @param request - the router's request (itty's proxy or the raw request).
 * @returns the same mutable context for every call on the same request.
 */
export function contextOf(request: IRequest): RequestContext {
  const target = request as WithContext;
  let context = target[CONTEXT];
  if (context === undefined) {
    context = {
      requestId: resolveRequestId(request.headers),
      startedAt: Date.now(),
      caller: undefined,
      routeName: undefined,
      upstreamStatus: undefined,
      errorCode: undefined,
      idempotency: undefined,
      cache: undefined,
    };
    target[CONTEXT] = context;
  }
  return context;
}

/**
 * The router's first `before` stage: creates the request context, so `startedAt` is
 * the arrival time and the request id exists before anything can fail.
 *
 * @param request - the incoming request.
 * @returns nothing, so the router moves on.
 */
export function beginRequest(request: IRequest): undefined {
  contextOf(request);
  return undefined;
}

/**
 * The settings the router loaded for this request (see {@link RequestContext.settings}).
 *
 * @param context - the request's context.
 * @returns the settings.
 * @throws {InternalError} 500 when a step runs before the router's settings step (a wiring bug).
 */
export function settingsIn(context: RequestContext): Settings {
  if (context.settings === undefined)
    throw new InternalError('settings read before they were loaded');
  return context.settings;
}
