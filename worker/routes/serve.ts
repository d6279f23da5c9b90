// What the gateway reads for one of its own routes before the route's handler runs: the
// query string (the one query reader, with the route's strictness) or the JSON body (lib's
// one JSON body reader, bounded by MAX_BODY_BYTES), so a handler is given valid input and
// its row in the route table says what that input is.
import type { IRequest } from 'itty-router';
import type * as v from 'valibot';
import { readJsonBody } from '../../lib/shared.ts';
import type { Settings } from '../config.ts';
import { withHttpErrors } from '../http/body.ts';
import { contextOf, settingsIn } from '../http/context.ts';
import { type QueryRule, readQuery } from '../http/query.ts';
import type { GatewayBody, InputHandler, RouteHandler } from './route.ts';

/** A route's handler with what is read for it first: its query schema or its body. */
export interface Served {
  readonly query?: v.GenericSchema;
  readonly body?: GatewayBody;
  readonly handler: RouteHandler;
}

/**
 * Serves a route reading a query string: the query is read with the route's strictness
 * before the handler runs.
 *
 * @param schema - the query schema (values as strings).
 * @param rule - how strictly the route reads its query.
 * @param handler - the handler, given the schema's output.
 * @returns what serves the route; its handler throws {HttpError} 400 `validation_failed`.
 */
export function queried<const Schema extends v.GenericSchema>(
  schema: Schema,
  rule: QueryRule,
  handler: InputHandler<v.InferOutput<Schema>>,
): Served {
  return {
    query: schema,
    handler: (request, env, ctx) =>
      handler(request, env, ctx, readQuery(schema, new URL(request.url).search, rule)),
  };
}

/**
 * Serves a route taking a JSON body, read before the handler runs.
 *
 * @param published - the schema the OpenAPI document shows.
 * @param handler - the handler, given the schema's output.
 * @param schemaFor - the schema validated with, built for the current settings (a
 *   subscription URL's rules depend on them); the published one by default.
 * @returns what serves the route; its handler throws {HttpError} 413, 415 or 400.
 */
export function bodied<const Schema extends v.GenericSchema>(
  published: Schema,
  handler: InputHandler<v.InferOutput<Schema>>,
  schemaFor: (settings: Settings) => Schema = () => published,
): Served {
  return {
    body: { schema: published, required: true },
    handler: async (request, env, ctx) =>
      handler(request, env, ctx, await readBody(request, schemaFor)),
  };
}

/**
 * Serves a route whose JSON body may be left out: a bare request (no `Content-Type`, no
 * or a zero `Content-Length`) is given `undefined`; any other is read as {@link bodied} does.
 *
 * @param schema - the body's schema.
 * @param handler - the handler, given the schema's output or `undefined`.
 * @returns what serves the route; its handler throws {HttpError} 413, 415 or 400.
 */
export function optionallyBodied<const Schema extends v.GenericSchema>(
  schema: Schema,
  handler: InputHandler<v.InferOutput<Schema> | undefined>,
): Served {
  return {
    body: { schema, required: false },
    handler: async (request, env, ctx) =>
      handler(
        request,
        env,
        ctx,
        hasBody(request) ? await readBody(request, () => schema) : undefined,
      ),
  };
}

async function readBody<Schema extends v.GenericSchema>(
  request: IRequest,
  schemaFor: (settings: Settings) => Schema,
): Promise<v.InferOutput<Schema>> {
  const settings = settingsIn(contextOf(request));
  const schema = schemaFor(settings);
  return (await withHttpErrors(() => readJsonBody(request, schema, settings.maxBodyBytes))).value;
}

function hasBody(request: IRequest): boolean {
  const length = request.headers.get('Content-Length');
  return request.headers.get('Content-Type') !== null || (length !== null && length !== '0');
}
