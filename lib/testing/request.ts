// What a handler gets, and how it reads a JSON body or a query with a valibot schema.
import * as v from 'valibot';
import type { SandboxCore } from './core.ts';
import { type Issue, SandboxHttpError, validationError } from './http-error.ts';

/** The request as a handler sees it. */
export interface RequestContext {
  core: SandboxCore;
  request: Request;
  url: URL;
  /** Decoded path parameters. */
  params: Record<string, string>;
  /** The exact body bytes received (empty for none). */
  rawBody: Uint8Array;
  requestId: string;
}

type AnySchema = v.GenericSchema<unknown, unknown>;

const decoder = new TextDecoder();

/**
 * A decoded path parameter.
 *
 * @throws {SandboxHttpError} 500 when the route has no such parameter (a programming error).
 */
export function param(ctx: RequestContext, name: string): string {
  const value = ctx.params[name];
  if (value === undefined)
    throw new SandboxHttpError(500, 'internal_error', `No parameter ${name}`);
  return value;
}

/**
 * Reads a JSON request body and validates it (spec: Endpoints, JSON bodies).
 *
 * @param ctx - the request.
 * @param schema - the request schema.
 * @returns the schema's output.
 * @throws {SandboxHttpError} 415 `unsupported_media_type` when Content-Type is not
 *   JSON; 400 `validation_failed` for malformed JSON, a non-object body, or schema issues.
 */
export function readJsonBody<S extends AnySchema>(
  ctx: RequestContext,
  schema: S,
): v.InferOutput<S> {
  const type = ctx.request.headers.get('Content-Type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new SandboxHttpError(
      415,
      'unsupported_media_type',
      'Content-Type must be application/json',
    );
  }
  return validate(schema, parseJsonObject(ctx.rawBody));
}

/**
 * Reads the body of a `/__sandbox/` control: JSON whatever the Content-Type, an empty
 * body meaning `{}`.
 *
 * @throws {SandboxHttpError} 400 `validation_failed` on malformed JSON or schema issues.
 */
export function readControlBody<S extends AnySchema>(
  ctx: RequestContext,
  schema: S,
): v.InferOutput<S> {
  if (decoder.decode(ctx.rawBody).trim() === '') return validate(schema, {});
  return validate(schema, parseJsonObject(ctx.rawBody));
}

/**
 * Validates the query string (first value of each name) against a schema.
 *
 * @throws {SandboxHttpError} 400 `validation_failed` with every issue.
 */
export function readQuery<S extends AnySchema>(ctx: RequestContext, schema: S): v.InferOutput<S> {
  const query: Record<string, string> = {};
  for (const [name, value] of ctx.url.searchParams) {
    if (!(name in query)) query[name] = value;
  }
  return validate(schema, query);
}

/**
 * Validates `input`, collecting every issue as `{ path, message }` with dot paths.
 *
 * @throws {SandboxHttpError} 400 `validation_failed`.
 */
export function validate<S extends AnySchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw validationError(result.issues.map(toIssue));
}

function toIssue(issue: v.BaseIssue<unknown>): Issue {
  const path = v.getDotPath(issue) ?? '';
  // valibot words a missing key as "Invalid key: ..."; say it plainly.
  const missing = issue.kind === 'schema' && issue.input === undefined && path !== '';
  return { path, message: missing ? 'Required' : issue.message };
}

function parseJsonObject(raw: Uint8Array): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(raw));
  } catch {
    throw validationError([{ path: '', message: 'Malformed JSON body' }]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw validationError([{ path: '', message: 'Expected a JSON object' }]);
  }
  return parsed;
}
