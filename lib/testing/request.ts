// What a handler gets, and how it reads a JSON body or a query with a valibot schema.
import * as v from 'valibot';
import { parseJsonBody, requestIssues } from '../internal/json-body.ts';
import type { SandboxCore } from './core.ts';
import { SandboxHttpError, validationError } from './http-error.ts';

/** The request as a handler sees it. */
export interface SandboxRequestContext {
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

// Controls are driven by hand (curl -d sends a form Content-Type): their body is read as
// JSON whatever the header says.
const CONTROL_CONTENT_TYPE = 'application/json';

/**
 * A decoded path parameter.
 *
 * @throws {SandboxHttpError} 500 when the route has no such parameter (a programming error).
 */
export function param(ctx: SandboxRequestContext, name: string): string {
  const value = ctx.params[name];
  if (value === undefined)
    throw new SandboxHttpError(500, 'internal_error', `No parameter ${name}`);
  return value;
}

/**
 * Reads a JSON request body and validates it with lib's one JSON body reader, so the
 * sandbox refuses a bad body with the gateway's status, code, message and issues.
 *
 * @param ctx - the request (its exact bytes, at most 64 KiB: `handleRequest` refuses more).
 * @param schema - the request schema.
 * @returns the schema's output.
 * @throws {BodyRejectedError} 415 `unsupported_media_type` when Content-Type is not JSON
 *   (UTF-8); 400 `validation_failed` for an empty, non-UTF-8 or malformed body, a
 *   non-object, a repeated key, or schema issues (rendered by `errorResponse`).
 */
export function readJsonBody<S extends AnySchema>(
  ctx: SandboxRequestContext,
  schema: S,
): v.InferOutput<S> {
  return parseJsonBody(ctx.rawBody, ctx.request.headers.get('Content-Type'), schema).value;
}

/**
 * Reads the body of a `/__sandbox/` control: JSON whatever the Content-Type, an empty
 * body meaning `{}`.
 *
 * @throws {BodyRejectedError} 400 `validation_failed` on malformed JSON or schema issues.
 * @throws {SandboxHttpError} 400 `validation_failed` when `{}` does not satisfy the schema.
 */
export function readControlBody<S extends AnySchema>(
  ctx: SandboxRequestContext,
  schema: S,
): v.InferOutput<S> {
  if (decoder.decode(ctx.rawBody).trim() === '') return validate(schema, {});
  return parseJsonBody(ctx.rawBody, CONTROL_CONTENT_TYPE, schema).value;
}

/**
 * Validates the query string (first value of each name) against a schema.
 *
 * @throws {SandboxHttpError} 400 `validation_failed` with every issue.
 */
export function parseQuery<S extends AnySchema>(
  ctx: SandboxRequestContext,
  schema: S,
): v.InferOutput<S> {
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
function validate<S extends AnySchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw validationError(requestIssues(result.issues));
}
