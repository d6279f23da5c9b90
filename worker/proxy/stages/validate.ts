import * as v from 'valibot';
import { checkBodySize, parseJsonBody } from '../../../lib/shared.ts';
import { withHttpErrors } from '../../http/body.ts';
import { settingsIn } from '../../http/context.ts';
import { readQuery } from '../../http/query.ts';
import type { ProxyRoute } from '../../routes/route.ts';
import type { ProxyExchange, ProxyStage, ValidBody, ValidQuery } from '../pipeline.ts';

// A body-less route (initiate-activation, cancel) takes no body, or an empty object that
// clients sending `{}` on every POST add: nothing the upstream does not expect leaves.
const NO_MEMBERS = v.custom<Record<string, never>>(
  (input) => typeof input === 'object' && input !== null && Object.keys(input).length === 0,
  'Expected no body or an empty JSON object',
);

// A route without a query schema declares no parameter: any one it is sent is refused.
const NO_PARAMETERS = v.object({});

/**
 * The proxy stage that lets nothing malformed leave: the body through lib's one JSON
 * body reader (413 `payload_too_large`, 415 `unsupported_media_type`, 400
 * `validation_failed` listing every issue with its dot path, the same responses as the
 * webhook ingress, the admin API and the sandbox give), and the query string against
 * the route's query schema (the gateway's one query reader, `declared-only`: a parameter
 * the route does not declare, or any parameter on a route without a query schema, is a
 * 400 issue at its name, since the query is forwarded as received).
 * It puts the parsed query and body on the exchange (`query`, `content`) for the later stages and never changes the bytes: those signed and forwarded are those received.
 *
 * @param route - the route being proxied; its `body` and `query` schemas are used.
 * @returns the stage.
 * @throws {HttpError} 413, 415 or 400 from the stage, rendered by the router.
 *
 * @example
 * ```ts
 * const stage = validationStage(route); // wired in by stagesFor (worker/routes/proxy.ts)
 * const response = await stage(exchange, next);
 * ```
 */
export function validationStage(route: ProxyRoute): ProxyStage {
  const takesBody = route.method !== 'GET';
  const schema = route.query ?? NO_PARAMETERS;
  return async (exchange, next) => {
    // Every query schema is an object's: its output is one.
    const query = readQuery(schema, exchange.search, 'declared-only') as ValidQuery;
    if (route.query !== undefined) exchange.query = query;
    if (takesBody) exchange.content = await withHttpErrors(() => validateBody(route, exchange));
    return next();
  };
}

/**
 * The body checks of lib's JSON body reader, on the bytes the proxy already read.
 *
 * @returns the body's text and the schema's output, or `undefined` for an empty body on
 *   a body-less route.
 * @throws {BodyRejectedError} 413, 415 or 400.
 */
function validateBody(route: ProxyRoute, exchange: ProxyExchange): ValidBody | undefined {
  const body = exchange.body ?? new Uint8Array();
  const headers = exchange.request.headers;
  checkBodySize(headers, body.byteLength, settingsIn(exchange.context).maxBodyBytes);
  // An empty body on a body-less route is what the SDK sends.
  if (route.body === undefined && body.byteLength === 0) return undefined;
  const { text, value } = parseJsonBody(
    body,
    headers.get('Content-Type'),
    route.body?.schema ?? NO_MEMBERS,
  );
  // parseJsonBody refuses anything but a JSON object, and every body schema is an object's.
  return { text, value: value as ValidBody['value'] };
}
