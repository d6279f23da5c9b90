/**
 * Reading a JSON request body, the one way the gateway (proxy, webhook ingress, admin
 * API) and the sandbox do it: bounded, a JSON media type, strict UTF-8 without a byte
 * order mark, one JSON object without repeated keys, then a valibot schema. A refusal is
 * a {@link BodyRejectedError} each side renders as its own error body, so the same bad
 * body gets the same status, code, message and issues everywhere.
 */
import * as v from 'valibot';
import type { Issue } from '../errors.ts';
import { findDuplicateKey } from './duplicate-key.ts';
import { toIssues } from './issues.ts';

/** Largest request body accepted when nothing else is configured: 64 KiB, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

/** A request whose body can be read: a `Request`, or a router's view of one. */
export interface BodySource {
  readonly headers: Headers;
  /** `null` (a `Request`) or `undefined` (itty-router's proxy) when there is no body. */
  readonly body: ReadableStream<Uint8Array> | null | undefined;
}

/** A body that passed every check: the exact bytes, their text and the schema's output. */
export interface JsonBody<T> {
  /** The bytes as received (what a signature covers and what is forwarded or stored). */
  readonly bytes: Uint8Array;
  /** The bytes as UTF-8 text. */
  readonly text: string;
  /** The schema's output. */
  readonly value: T;
}

/**
 * A request body refused by this module: 413 `payload_too_large`, 415
 * `unsupported_media_type` or 400 `validation_failed` with its issues. It names no
 * renderer: the gateway and the sandbox turn it into their own error bodies.
 */
export class BodyRejectedError extends Error {
  override name = 'BodyRejectedError';
  /** HTTP status to answer with. */
  readonly status: 400 | 413 | 415;
  /** Stable snake_case code of the error body. */
  readonly code: 'validation_failed' | 'payload_too_large' | 'unsupported_media_type';
  /** What is wrong, each at its dot path (`''` for the whole body); only with 400. */
  readonly issues: Issue[] | undefined;

  /**
   * @param status - 400, 413 or 415.
   * @param message - human readable; never quotes the body.
   * @param issues - the problems, for a 400.
   */
  constructor(status: 400 | 413 | 415, message: string, issues?: Issue[]) {
    super(message);
    this.status = status;
    this.code =
      status === 413
        ? 'payload_too_large'
        : status === 415
          ? 'unsupported_media_type'
          : 'validation_failed';
    this.issues = issues;
  }
}

// `application/json` or any `application/<name>+json` (RFC 6839), parameters aside.
const JSON_MEDIA_TYPE = /^application\/(?:[\w!#$%&'*.^`|~-]+\+)?json$/;

// Fatal: invalid UTF-8 is refused, not replaced. ignoreBOM keeps a BOM so it is refused too.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads a body, stopping one chunk past `limit` bytes: an oversized upload is never
 * buffered whole. It refuses nothing; {@link checkBodySize} does, on the length.
 *
 * @param request - the request (its `body` stream).
 * @param limit - the body limit in bytes.
 * @returns the bytes read: the whole body, or more than `limit` of them when it is larger.
 */
export async function readCapped(request: BodySource, limit: number): Promise<Uint8Array> {
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
 * Refuses a body over the limit, by its declared `Content-Length` or by the bytes read
 * (a lying or missing header changes nothing).
 *
 * @param headers - the request headers (`Content-Length`).
 * @param byteLength - the bytes read so far; 0 to check the declared length alone.
 * @param limit - the body limit in bytes.
 * @throws {BodyRejectedError} 413 `payload_too_large` "Request body exceeds <limit> bytes".
 */
export function checkBodySize(headers: Headers, byteLength: number, limit: number): void {
  const declared = headers.get('Content-Length');
  if (byteLength > limit || (declared !== null && /^\d+$/.test(declared) && +declared > limit)) {
    throw new BodyRejectedError(413, `Request body exceeds ${limit} bytes`);
  }
}

/**
 * Reads a whole body of at most `limit` bytes: a declared `Content-Length` over it is
 * refused before reading anything, a longer stream as soon as it passes the limit.
 *
 * @param request - the request.
 * @param limit - the body limit in bytes. @default DEFAULT_MAX_BODY_BYTES
 * @returns the exact bytes received.
 * @throws {BodyRejectedError} 413 `payload_too_large`.
 */
export async function readBody(
  request: BodySource,
  limit: number = DEFAULT_MAX_BODY_BYTES,
): Promise<Uint8Array> {
  checkBodySize(request.headers, 0, limit);
  const bytes = await readCapped(request, limit);
  checkBodySize(request.headers, bytes.byteLength, limit);
  return bytes;
}

/**
 * Checks body bytes already read, in this order: not empty (400 whatever the
 * Content-Type: the problem is the missing body), a JSON media type with a UTF-8 charset
 * if any (415), strict UTF-8 without a byte order mark, valid JSON, a JSON object, no key
 * repeated within an object (`JSON.parse` keeps the last value, other parsers the first:
 * what was validated must be what the next reader sees), then `schema`.
 *
 * @param bytes - the body as received.
 * @param contentType - the `Content-Type` header, or `null`.
 * @param schema - validates the parsed object; every issue is listed.
 * @returns the bytes, their text and the schema's output.
 * @throws {BodyRejectedError} 415 "Content-Type must be application/json (UTF-8)"; 400
 *   "The request body is not a JSON object" (one issue at `''`) or "The request body is
 *   invalid" (a duplicate key at its dot path, or the schema's issues, see {@link requestIssues}).
 *
 * @example
 * ```ts
 * const { value } = parseJsonBody(bytes, request.headers.get('Content-Type'), Schema);
 * ```
 */
export function parseJsonBody<S extends v.GenericSchema>(
  bytes: Uint8Array,
  contentType: string | null,
  schema: S,
): JsonBody<v.InferOutput<S>> {
  if (bytes.byteLength === 0) throw invalid([{ path: '', message: 'Expected a JSON object body' }]);
  if (!isJsonMediaType(contentType)) {
    throw new BodyRejectedError(415, 'Content-Type must be application/json (UTF-8)');
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw notAnObject('Expected UTF-8 text');
  }
  if (text.startsWith('\uFEFF')) throw notAnObject('Expected JSON without a byte order mark');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's own message quotes the input: it is never echoed.
    throw notAnObject('Expected a valid JSON document');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw notAnObject('Expected a JSON object');
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    throw invalid([{ path: duplicate, message: 'Duplicate key: each key may appear once' }]);
  }
  const result = v.safeParse(schema, parsed);
  if (!result.success) throw invalid(requestIssues(result.issues));
  return { bytes, text, value: result.output };
}

/**
 * Reads and checks a JSON body: {@link readBody} (413) then {@link parseJsonBody} (400, 415).
 *
 * @param request - the request.
 * @param schema - validates the parsed object.
 * @param limit - the body limit in bytes. @default DEFAULT_MAX_BODY_BYTES
 * @returns the exact bytes, their text and the schema's output.
 * @throws {BodyRejectedError} 413, 415 or 400, as those two say.
 *
 * @example
 * ```ts
 * const { value } = await readJsonBody(request, NewSubscriptionSchema, 65_536);
 * ```
 */
export async function readJsonBody<S extends v.GenericSchema>(
  request: BodySource,
  schema: S,
  limit: number = DEFAULT_MAX_BODY_BYTES,
): Promise<JsonBody<v.InferOutput<S>>> {
  const bytes = await readBody(request, limit);
  return parseJsonBody(bytes, request.headers.get('Content-Type'), schema);
}

/**
 * valibot issues as `{ path, message }` with dot paths (`data.amount`, `items.0.code`,
 * `''` for the root), a missing key reading "Required" and a key a strict object does
 * not know "Unknown field", instead of valibot's wording about `undefined` and `never`.
 *
 * @param issues - the issues of a failed `safeParse` (of a body or a query).
 * @returns one issue per valibot issue, in order.
 */
export function requestIssues(issues: readonly v.BaseIssue<unknown>[]): Issue[] {
  return toIssues(issues).map((issue, index) => {
    const raw = issues[index];
    if (raw?.kind !== 'schema' || issue.path === '') return issue;
    if (raw.expected === 'never') return { path: issue.path, message: 'Unknown field' };
    return raw.input === undefined ? { path: issue.path, message: 'Required' } : issue;
  });
}

/** Whether `header` names JSON (RFC 8259 section 8.1: UTF-8, the only charset allowed). */
function isJsonMediaType(header: string | null): boolean {
  const [essence = '', ...parameters] = (header ?? '').split(';');
  const charset = parameters
    .map((parameter) => parameter.trim().split('='))
    .find(([name]) => name?.trim().toLowerCase() === 'charset')?.[1];
  const utf8 = charset === undefined || /^"?utf-8"?$/i.test(charset.trim());
  return utf8 && JSON_MEDIA_TYPE.test(essence.trim().toLowerCase());
}

function notAnObject(message: string): BodyRejectedError {
  return new BodyRejectedError(400, 'The request body is not a JSON object', [
    { path: '', message },
  ]);
}

function invalid(issues: Issue[]): BodyRejectedError {
  return new BodyRejectedError(400, 'The request body is invalid', issues);
}
