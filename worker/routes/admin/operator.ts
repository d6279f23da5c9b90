/**
 * Who is asking, for the admin actions that record it (retry, replay, bulk recovery): the
 * identity Cloudflare Access put on the request when Access guards `/admin` (the deployment
 * guide recommends it), else the `operator` the request body names, else nobody. It labels
 * the attempts and jobs an operator reads; it is not authentication (the admin token is).
 */
import * as v from 'valibot';
import { OPERATOR_NAME } from '../../relay/operator-request.ts';
import { validationFailed } from './query.ts';

/**
 * The header Cloudflare Access sets to the signed-in user's email on every request it lets
 * through to the origin.
 */
const ACCESS_USER_HEADER = 'Cf-Access-Authenticated-User-Email';

/**
 * The `operator` of an admin request body: 1 to 100 printable ASCII characters (it is
 * shown in the console and written to logs, so no control characters).
 */
export const OperatorNameSchema = v.pipe(
  v.string(),
  v.regex(OPERATOR_NAME, 'Expected 1 to 100 printable ASCII characters'),
  v.description(
    `Who is asking, recorded with what this causes; the ${ACCESS_USER_HEADER} header wins when Cloudflare Access sets it.`,
  ),
);

/**
 * The operator's name for an admin action: the Access header when present (Access
 * authenticated that user; the body's name is only what the caller typed), else `given`.
 *
 * @param request - the admin request.
 * @param given - the body's `operator`, already validated.
 * @returns the name, or `null` when there is none.
 * @throws {HttpError} 400 `validation_failed` naming the header when its value is not 1 to
 *   100 printable ASCII characters.
 */
export function operatorOf(request: Request, given: string | undefined): string | null {
  const fromAccess = request.headers.get(ACCESS_USER_HEADER);
  if (fromAccess === null) return given ?? null;
  if (!OPERATOR_NAME.test(fromAccess)) {
    throw validationFailed('The request headers are invalid', [
      { path: ACCESS_USER_HEADER, message: 'Expected 1 to 100 printable ASCII characters' },
    ]);
  }
  return fromAccess;
}
