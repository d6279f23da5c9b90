// Request faults: a response that says nothing about what happened. `error` answers a 5xx and
// processes nothing; `error_then_commit` and `drop_then_commit` answer a 5xx or nothing and
// process the request later, as a provider's backend does behind a failing load balancer;
// `delay` holds the request before processing it, past a short client timeout.
import type { SandboxCore } from './core.ts';
import type { FaultRule } from './fault-rules.ts';
import { SandboxHttpError } from './http-error.ts';
import type { SandboxRequestContext } from './request.ts';
import type { RequestLogEntry } from './request-log.ts';
import { apiErrorResponse, iso } from './respond.ts';
import type { Route } from './router.ts';
import { settleDue } from './settlement.ts';

/** `METHOD /path/:param` of a route, as rules and docs/endpoints.md name it. */
export function routeKey(route: Route): string {
  return `${route.method} ${route.pattern}`;
}

/** The error a faulted request is answered with, in the sandbox's error body. */
export function injectedError(rule: FaultRule): SandboxHttpError {
  const status = rule.status ?? 503;
  return new SandboxHttpError(
    status,
    'internal_error',
    `Injected fault (${rule.fault}): upstream answered ${status}`,
  );
}

/**
 * Runs a route's handler with `core.currentRoute` set, so the records it creates pick up
 * the record faults limited to that route. Handlers are synchronous, so no other request
 * interleaves.
 */
export async function runHandler(
  core: SandboxCore,
  route: Route,
  ctx: SandboxRequestContext,
): Promise<Response> {
  core.currentRoute = routeKey(route);
  try {
    return await route.handler(ctx);
  } finally {
    core.currentRoute = undefined;
  }
}

/** What the pipeline does with a request once its rule (if any) has acted. */
export type RuleOutcome =
  | { kind: 'process' }
  | { kind: 'answer'; error: SandboxHttpError; deferred: FaultRule }
  | { kind: 'drop'; deferred: FaultRule };

/**
 * Plays an authenticated request's rule (`error` was answered before authentication):
 * counts it, holds a `delay`ed request, or tells the pipeline to answer or drop now and
 * process later.
 */
export async function playRule(
  core: SandboxCore,
  rule: FaultRule | undefined,
): Promise<RuleOutcome> {
  if (rule === undefined) return { kind: 'process' };
  rule.fired += 1;
  switch (rule.fault) {
    case 'delay':
      await core.timers.sleep(rule.afterMs ?? 0);
      return { kind: 'process' };
    case 'error_then_commit':
      return { kind: 'answer', error: injectedError(rule), deferred: rule };
    case 'drop_then_commit':
      return { kind: 'drop', deferred: rule };
    default:
      return { kind: 'process' };
  }
}

/**
 * Processes a request `after_ms` (real time) after it was answered or dropped, as if it
 * arrived then: the signature was checked on arrival, the sandbox clock is that of the
 * commit. Nothing is added to the request log (the request reached the sandbox once);
 * its entry's `fault.commit_status` and `fault.committed_at` say how the commit went. A
 * reset before then cancels it.
 */
export function deferCommit(
  core: SandboxCore,
  rule: FaultRule,
  route: Route,
  ctx: SandboxRequestContext,
  entry: RequestLogEntry | undefined,
): void {
  core.timers.after(rule.afterMs ?? 0, 'state', async () => {
    settleDue(core);
    let status: number;
    try {
      status = (await runHandler(core, route, ctx)).status;
    } catch (error) {
      status = apiErrorResponse(error, ctx.requestId).status;
    }
    if (entry?.fault !== undefined) {
      entry.fault.commit_status = status;
      entry.fault.committed_at = iso(core.now());
    }
  });
}
