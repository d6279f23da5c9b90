import * as v from 'valibot';
import { toIssues } from '../../../lib/internal/issues.ts';
import { requireJsonContentType } from '../../http/body.ts';
import { type ErrorIssue, HttpError } from '../../http/errors.ts';
import type { UpstreamRoute } from '../../upstream/routes.ts';
import type { ProxyExchange, ProxyStage } from '../pipeline.ts';

/** Largest request body accepted when `MAX_BODY_BYTES` is unset or invalid: 64 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

// Fatal: invalid UTF-8 is refused, not replaced. ignoreBOM keeps a BOM so it is refused too.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The proxy stage that lets nothing malformed leave (DESIGN 4.1, issue 4 point 1):
 * body limit (413 `payload_too_large`), JSON only (415 `unsupported_media_type`),
 * malformed JSON and schema failures (400 `validation_failed` listing every issue with
 * its dot path), and the query string against the route's query schema. It reads the
 * exchange and never changes it: the bytes signed and forwarded are the bytes received.
 *
 * @param route - the route being proxied; its `body` and `query` schemas are used.
 * @returns the stage, or `undefined` for a GET route without a query schema.
 * @throws {HttpError} 413, 415 or 400 from the stage, rendered by the router (DESIGN 4.4).
 *
 * @example
 * ```ts
 * const stage = validationStage(route); // wired in by stagesFor (worker/routes/proxy.ts)
 * const response = stage === undefined ? await next() : await stage(exchange, next);
 * ```
 */
export function validationStage(route: UpstreamRoute): ProxyStage | undefined {
  const takesBody = route.method !== 'GET';
  if (!takesBody && route.query === undefined) return undefined;
  return async (exchange, next) => {
    if (route.query !== undefined) validateQuery(route.query, exchange.search);
    if (takesBody) validateBody(route, exchange);
    return next();
  };
}

/**
 * The body limit from `MAX_BODY_BYTES`: a positive whole number of bytes, else the default.
 *
 * @param value - the raw setting (`env.MAX_BODY_BYTES`).
 * @returns the limit in bytes. @default 65536
 */
export function maxBodyBytes(value: string | undefined): number {
  const limit = value !== undefined && /^\d{1,15}$/.test(value.trim()) ? Number(value) : 0;
  return limit > 0 ? limit : DEFAULT_MAX_BODY_BYTES;
}

function validateBody(route: UpstreamRoute, exchange: ProxyExchange): void {
  const body = exchange.body ?? new Uint8Array();
  const headers = exchange.request.headers;
  const limit = maxBodyBytes(exchange.env.MAX_BODY_BYTES);
  const declared = headers.get('Content-Length');
  const declaredTooLarge = declared !== null && /^\d+$/.test(declared) && Number(declared) > limit;
  if (declaredTooLarge || body.byteLength > limit) {
    throw new HttpError(413, 'payload_too_large', `Request body exceeds ${limit} bytes`);
  }
  // An empty body on a body-less route (initiate-activation, cancel) is what the SDK sends.
  if (route.body === undefined && body.byteLength === 0) return;
  if (route.body !== undefined && body.byteLength === 0) {
    throw invalid('The request body is invalid', [
      { path: '', message: 'Expected a JSON object body' },
    ]);
  }
  requireJsonContentType(headers.get('Content-Type'));
  const value = parseJsonObject(body);
  if (route.body === undefined) {
    if (Object.keys(value).length > 0) {
      throw invalid('The request body is invalid', [
        { path: '', message: 'Expected no body or an empty JSON object' },
      ]);
    }
    return;
  }
  const result = v.safeParse(route.body, value);
  if (!result.success) throw invalid('The request body is invalid', issuesOf(result.issues));
}

/** @throws {HttpError} 400 with an issue at the root saying what is wrong with the bytes. */
function parseJsonObject(body: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw malformed('Expected UTF-8 text');
  }
  if (text.startsWith('\uFEFF')) throw malformed('Expected JSON without a byte order mark');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed('Expected a valid JSON document');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed('Expected a JSON object');
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    throw invalid('The request body is invalid', [
      { path: duplicate, message: 'Duplicate key: each key may appear once' },
    ]);
  }
  return value as Record<string, unknown>;
}

/**
 * The dot path of the first key repeated within one object of `text`, a valid JSON
 * document. `JSON.parse` keeps the last value while another parser may keep the first:
 * refusing duplicates means the upstream reads the object we validated.
 */
function findDuplicateKey(text: string): string | undefined {
  interface Frame {
    readonly keys: Set<string> | undefined;
    readonly path: string;
    key: string;
    index: number;
    expectKey: boolean;
  }
  const stack: Frame[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    const top = stack.at(-1);
    if (char === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys !== undefined && top.expectKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        if (top.keys.has(key)) return joinPath(top.path, key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      at = end;
    } else if (char === '{' || char === '[') {
      const path =
        top === undefined ? '' : joinPath(top.path, top.keys ? top.key : String(top.index));
      const keys = char === '{' ? new Set<string>() : undefined;
      stack.push({ keys, path, key: '', index: 0, expectKey: char === '{' });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',' && top !== undefined) {
      if (top.keys === undefined) top.index += 1;
      else top.expectKey = true;
    }
  }
  return undefined;
}

/**
 * Validates the query string as a record of strings. A parameter the schema declares
 * may appear once; others are left to the schema (which ignores them).
 *
 * @throws {HttpError} 400 listing every issue.
 */
function validateQuery(schema: v.GenericSchema, search: string): void {
  const declared = 'entries' in schema ? (schema.entries as Record<string, unknown>) : {};
  const values = new Map<string, string>();
  const repeated: ErrorIssue[] = [];
  for (const [name, value] of new URLSearchParams(search)) {
    if (!values.has(name)) values.set(name, value);
    else if (Object.hasOwn(declared, name) && !repeated.some((issue) => issue.path === name)) {
      repeated.push({ path: name, message: 'Expected a single value' });
    }
  }
  const result = v.safeParse(schema, Object.fromEntries(values));
  const issues = [...repeated, ...(result.success ? [] : issuesOf(result.issues))];
  if (issues.length > 0) throw invalid('The query string is invalid', issues);
}

/** valibot issues as `{ path, message }`; a missing key reads "Required". */
function issuesOf(issues: readonly v.BaseIssue<unknown>[]): ErrorIssue[] {
  return toIssues(issues).map((issue, index) => {
    const original = issues[index];
    const missing = original?.kind === 'schema' && original.input === undefined;
    return missing && issue.path !== '' ? { path: issue.path, message: 'Required' } : issue;
  });
}

function joinPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

function malformed(message: string): HttpError {
  return invalid('The request body is not a JSON object', [{ path: '', message }]);
}

function invalid(message: string, issues: readonly ErrorIssue[]): HttpError {
  return new HttpError(400, 'validation_failed', message, { issues });
}
