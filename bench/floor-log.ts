// The access-log line of the benchmark floors, written by the gateway's own code: every
// production gateway logs each request, so a floor that logs nothing is not a fair
// reference. Under `wrangler dev` the line is a large part of a small Worker's cost (it is
// parsed and printed by wrangler's Node process on the same cores), and this way the
// floors pay exactly what the gateway pays for it.

import { resolveRequestId } from '../lib/shared.ts';
import { logRequest } from '../worker/http/log.ts';

/**
 * Writes the gateway's access-log line for a request the floor answered.
 *
 * @param request - the incoming request (its `X-Request-Id` is used when sane, as the gateway does).
 * @param status - the status answered (and the upstream's, for a pass-through).
 * @param startedAt - `Date.now()` when the request arrived, in milliseconds.
 */
export function logLikeGateway(request: Request, status: number, startedAt: number): void {
  logRequest(
    {
      requestId: resolveRequestId(request.headers),
      startedAt,
      caller: 'bench',
      routeName: new URL(request.url).pathname,
      upstreamStatus: status,
      errorCode: undefined,
      idempotency: undefined,
      cache: undefined,
    },
    request.method,
    status,
  );
}
