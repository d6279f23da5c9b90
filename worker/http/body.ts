// Request bodies as the gateway reads them: bounded, JSON, UTF-8.
import { HttpError } from './errors.ts';

// `application/json` or any `application/<name>+json` (RFC 6839), parameters aside.
const JSON_MEDIA_TYPE = /^application\/(?:[\w!#$%&'*.^`|~-]+\+)?json$/;

/**
 * Reads a request body, stopping one chunk past `limit` bytes: an oversized upload is
 * never buffered whole (callers answer 413 on the length they get back).
 *
 * @param request - the incoming request (a Request, or itty-router's proxy of one).
 * @param limit - the body limit in bytes.
 * @returns the bytes read: the whole body, or more than `limit` of them when it is larger.
 */
export async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  // itty-router's request proxy gives `undefined`, a Request `null`, for no body.
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      break;
    }
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Requires a JSON media type (`application/json` or `application/<name>+json`) whose
 * charset, when given, is UTF-8 (RFC 8259 section 8.1).
 *
 * @param header - the `Content-Type` header, or `null`.
 * @throws {HttpError} 415 `unsupported_media_type` otherwise.
 */
export function requireJsonContentType(header: string | null): void {
  const [essence = '', ...parameters] = (header ?? '').split(';');
  const charset = parameters
    .map((parameter) => parameter.trim().split('='))
    .find(([name]) => name?.trim().toLowerCase() === 'charset')?.[1];
  const utf8 = charset === undefined || /^"?utf-8"?$/i.test(charset.trim());
  if (!JSON_MEDIA_TYPE.test(essence.trim().toLowerCase()) || !utf8) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      'Content-Type must be application/json (UTF-8)',
    );
  }
}
