// Path parameters as handlers see them: percent-decoded once, in one place, so an id sent
// as `evt%201` finds the record stored as `evt 1`, and the proxy never forwards an
// encoding it did not check.
import type { IRequest } from 'itty-router';
import { HttpError } from './errors.ts';

/**
 * Replaces each of the matched route's `request.params` with its percent-decoded value
 * (itty-router leaves them as received). Runs as route middleware, before authentication
 * is answered or any handler reads a parameter.
 *
 * @param request - the router's request, its `params` filled by the match.
 * @returns `undefined`, so the next handler runs.
 * @throws {HttpError} 400 `validation_failed` naming the parameter when its
 *   percent-encoding is malformed (`%zz`, a lone `%`, bytes that are not UTF-8).
 */
export function decodeParams(request: IRequest): undefined {
  const params = request.params;
  for (const name of Object.keys(params)) {
    const raw = params[name] ?? '';
    try {
      params[name] = decodeURIComponent(raw);
    } catch {
      throw new HttpError(400, 'validation_failed', 'The request path is invalid', {
        issues: [{ path: name, message: 'Malformed percent-encoding' }],
      });
    }
  }
  return undefined;
}
