import type { IRequest } from 'itty-router';
import { contextOf } from '../http/context.ts';
import { jsonResponse } from '../http/respond.ts';

/** Path of the liveness check; open (no bearer token). */
export const HEALTH_PATH = '/healthz';

/**
 * `GET /healthz`: answers `{ status: 'ok' }` without touching the upstream or storage.
 *
 * @param request - the incoming request.
 * @returns 200 JSON.
 */
export function health(request: IRequest): Response {
  contextOf(request).routeName = 'health';
  return jsonResponse({ status: 'ok' });
}
