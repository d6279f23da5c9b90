// Request bodies as the gateway reads them: lib's one JSON body reader, its refusals
// turned into the gateway's HttpError so the router renders them like every other error.
import { BodyRejectedError } from '../../lib/shared.ts';
import { HttpError } from './errors.ts';

/**
 * Runs one of lib/shared.ts's body readers (`readBody`, `parseJsonBody`,
 * `readJsonBody`, `checkBodySize`) and rethrows its refusal as an {@link HttpError}
 * with the same status, code, message and issues.
 *
 * @param read - the reading step.
 * @returns what `read` returns.
 * @throws {HttpError} 413 `payload_too_large`, 415 `unsupported_media_type` or 400
 *   `validation_failed`; anything else `read` throws, unchanged.
 *
 * @example
 * ```ts
 * const { value } = await withHttpErrors(() => readJsonBody(request, Schema, limit));
 * ```
 */
export async function withHttpErrors<T>(read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof BodyRejectedError)) throw error;
    const issues = error.issues === undefined ? {} : { issues: error.issues };
    throw new HttpError(error.status, error.code, error.message, { ...issues, cause: error });
  }
}
