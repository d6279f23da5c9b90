import type { IRequest } from 'itty-router';
import { jsonResponse } from '../http/respond.ts';

/** Path of the liveness check; open (no bearer token). */
export const HEALTH_PATH = '/healthz';

/**
 * `GET /healthz`: answers `{ status: 'ok' }` without touching the upstream or storage.
 *
 * @param request - the incoming request.
 * @returns 200 JSON.
 */
export function health(_request: IRequest): Response {
  return jsonResponse({ status: 'ok' });
}
