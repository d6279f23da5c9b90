// The request pipeline: settle, read, route, size, faults, authenticate, handle, errors, log.
import { checkBodySize, DEFAULT_MAX_BODY_BYTES, readCapped } from '../internal/json-body.ts';
import { REQUEST_ID_HEADER, resolveRequestId } from '../internal/request-id.ts';
import { authenticate } from './auth.ts';
import type { SandboxCore } from './core.ts';
import { findRequestRule, namedReferences } from './fault-rules.ts';
import { applyFaults } from './faults.ts';
import { notFoundError, SandboxHttpError } from './http-error.ts';
import type { SandboxRequestContext } from './request.ts';
import {
  deferCommit,
  injectedError,
  playRule,
  type RuleOutcome,
  routeKey,
  runHandler,
} from './request-faults.ts';
import { isLoggedPath, type RequestFaultView, recordRequest } from './request-log.ts';
import { apiErrorResponse } from './respond.ts';
import { matchRoute, type Route } from './router.ts';
import { SANDBOX_ROUTES } from './routes.ts';
import { settleDue } from './settlement.ts';

/**
 * Rejection of `Sandbox.fetch` when fault injection drops the connection, like a reset
 * socket: with `drop_rate` the request was processed (and committed) but its response is
 * lost; with a `drop_then_commit` rule it is processed later. A `TypeError`, as `fetch`
 * rejects on network errors.
 */
export class ConnectionDroppedError extends TypeError {
  /** Always `'ConnectionDroppedError'`, as logs print it. */
  override name = 'ConnectionDroppedError';
}

/**
 * Answers one request. Due items settle first (lazily, so in-process use needs no
 * ticks). API endpoints see injected faults: latency, then a 503 before anything is
 * processed, the first timing fault rule matching the request (fault-rules.ts; `error`
 * before the signature check, the others after it), or a drop after processing. A body
 * over 64 KiB is refused (413) once the route is known, before anything else looks at
 * it. Every response carries `X-Request-Id` (the caller's when it is 1 to 128 visible
 * ASCII characters, else a new UUID). Every request outside `/__sandbox/*` and
 * `/checkout/*` is added to the request log once answered (or dropped), whatever its
 * status, and only then: a deferred commit adds nothing.
 *
 * @param core - the sandbox.
 * @param request - the incoming request.
 * @returns the response; errors are rendered as `{ status: 'error', message, code,
 *   issues?, request_id }` bodies, as the gateway renders them.
 * @throws {ConnectionDroppedError} when `drop_rate` or a `drop_then_commit` rule picks this request.
 */
export async function handleRequest(core: SandboxCore, request: Request): Promise<Response> {
  const requestId = resolveRequestId(request.headers);
  const receivedAt = core.now();
  const url = new URL(request.url);
  let rawBody: Uint8Array = new Uint8Array();
  let drop = false;
  let faulted: { route: Route; ctx: SandboxRequestContext; outcome: RuleOutcome } | undefined;
  let fault: RequestFaultView | undefined;
  let response: Response;
  try {
    settleDue(core);
    // Read before routing so the request log shows the body of a 404, 405 or 503 too;
    // capped, so an oversized upload is never buffered whole.
    rawBody = await readCapped(request, DEFAULT_MAX_BODY_BYTES);
    const match = matchRoute(SANDBOX_ROUTES, request.method, url.pathname);
    if (match.kind === 'not_found') throw notFoundError(`No route for ${url.pathname}`);
    if (match.kind === 'method_not_allowed') {
      throw new SandboxHttpError(
        405,
        'method_not_allowed',
        `Method ${request.method} is not allowed on ${url.pathname}`,
        { headers: { Allow: match.allow.join(', ') } },
      );
    }
    const { route, params } = match;
    const ctx: SandboxRequestContext = { core, request, url, params, rawBody, requestId };
    // Before the signature check, which would refuse the cut-off bytes as a bad signature.
    checkBodySize(request.headers, rawBody.byteLength, DEFAULT_MAX_BODY_BYTES);
    const faultable = route.access === 'signed' || route.access === 'public';
    if (faultable) drop = await applyFaults(core.state.faults, core.options.random);
    const rule = faultable
      ? findRequestRule(core, routeKey(route), namedReferences(ctx))
      : undefined;
    if (rule?.fault === 'error') {
      // An outage answers whoever asks, signed or not.
      rule.fired += 1;
      fault = { rule: rule.id, fault: rule.fault };
      throw injectedError(rule);
    }
    if (route.access === 'signed') await authenticate(core.options, request.headers, rawBody);
    const outcome = await playRule(core, rule);
    if (rule !== undefined) fault = { rule: rule.id, fault: rule.fault };
    if (outcome.kind !== 'process') {
      faulted = { route, ctx, outcome };
      fault = { rule: outcome.deferred.id, fault: outcome.deferred.fault };
      fault.commit_status = null;
      fault.committed_at = null;
      if (outcome.kind === 'answer') throw outcome.error;
      drop = true;
      response = new Response(null);
    } else {
      // Time passed while awaiting; settle again so the handler sees the current state.
      settleDue(core);
      response = await runHandler(core, route, ctx);
    }
  } catch (error) {
    response = apiErrorResponse(error, requestId);
  }
  response.headers.set(REQUEST_ID_HEADER, requestId);
  const entry = isLoggedPath(url.pathname)
    ? recordRequest(core, {
        request,
        url,
        rawBody,
        requestId,
        receivedAt,
        status: drop ? null : response.status,
        fault,
      })
    : undefined;
  if (faulted !== undefined && faulted.outcome.kind !== 'process') {
    deferCommit(core, faulted.outcome.deferred, faulted.route, faulted.ctx, entry);
  }
  if (drop) throw new ConnectionDroppedError('Injected fault: connection dropped');
  return response;
}
