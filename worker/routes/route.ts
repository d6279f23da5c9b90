// What a route of the gateway is: the row type of the route table (worker/routes/table.ts)
// and the builders of its rows, one of the gateway's own routes with its handler, or the
// proxied route of an endpoint of the SDK's table, served by the proxy pipeline.
import type { IRequest } from 'itty-router';
import type * as v from 'valibot';
import { type EndpointName, idempotencyOf, type NamedEndpoint } from '../../lib/index.ts';
import { SuccessEnvelopeSchema } from '../openapi/components.ts';
import type { Served } from './serve.ts';

/** Methods the gateway's routes use. */
type GatewayMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * How a route authenticates its caller, enforced by the middleware the router mounts for
 * it: `none` (open), `none-or-admin` (open, but the handler requires `ADMIN_TOKEN` for
 * its privileged variant: the health check, open for load balancers and uptime probes,
 * takes the admin token with `?deep=1`), `bearer` (a caller token from
 * `GATEWAY_CALLERS`), `admin` (`ADMIN_TOKEN`) or `webhook-signature` (the payment
 * service's HMAC headers over the exact body bytes).
 */
export type GatewayAuth = 'none' | 'none-or-admin' | 'bearer' | 'admin' | 'webhook-signature';

/**
 * Whether a route takes an `Idempotency-Key`: a proxied route's is its endpoint's
 * (`idempotencyOf`); the gateway's own routes take none.
 */
type IdempotencyPolicy = 'required' | 'optional' | 'none';

/** Which KV cache a proxied route's answers go to: the bank list or account resolution. */
export type CachePolicy = 'banks' | 'resolve';

/** Success statuses of the gateway's own routes (204 answers without a body). */
type SuccessStatus = 200 | 201 | 202 | 204;

/**
 * An error status answered with a body of the route's own (not the error body): the deep
 * health check's 503 `degraded`.
 */
interface RouteFailureResponse {
  readonly status: number;
  /** The OpenAPI response's description. */
  readonly description: string;
  readonly schema: v.GenericSchema;
}

/** A JSON request body: its valibot schema and whether it may be left out. */
export interface GatewayBody {
  readonly schema: v.GenericSchema;
  readonly required: boolean;
}

/** One route of the gateway: answered by the gateway itself, or proxied to the payments API. */
export interface GatewayRoute<Name extends string = string> {
  /**
   * The access log's `route`, the OpenAPI `operationId` and, for proxied routes, the name
   * caller allow-lists match (the endpoint's name, e.g. `payments.initialize`).
   */
  readonly name: Name;
  readonly method: GatewayMethod;
  /** itty-router pattern; `:param` segments become OpenAPI path parameters. */
  readonly pattern: `/${string}`;
  readonly auth: GatewayAuth;
  /**
   * One line for the OpenAPI `summary` of one of the gateway's own routes; `undefined` on
   * a proxied route (the OpenAPI builder names it by its method and path).
   */
  readonly summary: string | undefined;
  readonly status: SuccessStatus;
  /** The JSON body the handler validates, if it reads one. */
  readonly body: GatewayBody | undefined;
  /** The valibot schema of the query string (values as strings), if the handler reads one. */
  readonly query: v.GenericSchema | undefined;
  /** The success body; `undefined` for a 204. */
  readonly response: v.GenericSchema | undefined;
  /** Error statuses besides those implied by `auth`, `body`, `query` and path parameters. */
  readonly extraErrors: readonly number[];
  /** An error status answered with the route's own body instead of the error body. */
  readonly failureResponse: RouteFailureResponse | undefined;
  /** Proxied routes: the endpoint forwarded upstream with the same method and path. */
  readonly endpoint: NamedEndpoint | undefined;
  readonly idempotency: IdempotencyPolicy;
  /** Proxied routes whose responses are kept in KV. */
  readonly cache: CachePolicy | undefined;
}

/** A proxied route: a {@link GatewayRoute} with its endpoint (the proxy pipeline serves it). */
export interface ProxyRoute extends GatewayRoute<EndpointName> {
  readonly endpoint: NamedEndpoint;
}

/** An itty-router handler of one of the gateway's own routes. */
export type RouteHandler = (
  request: IRequest,
  env: Env,
  ctx: ExecutionContext,
) => Response | Promise<Response>;

/**
 * A handler of a route that reads a query or a body: it is also given what it reads,
 * validated before it runs (see worker/routes/serve.ts).
 */
export type InputHandler<Input> = (
  request: IRequest,
  env: Env,
  ctx: ExecutionContext,
  input: Input,
) => Response | Promise<Response>;

/**
 * One of the gateway's own routes: a {@link GatewayRoute} with the handler serving it (the
 * type requires one, so no route can be described without being served).
 */
export interface OwnRoute<Name extends string = string> extends GatewayRoute<Name> {
  readonly endpoint: undefined;
  readonly handler: RouteHandler;
}

/** A route and what serves it: its own handler, or the proxy pipeline of its endpoint. */
export type ServedRoute = OwnRoute | ProxyRoute;

type RouteOptions = Partial<
  Pick<GatewayRoute, 'status' | 'body' | 'response' | 'extraErrors' | 'failureResponse'>
>;

/**
 * One of the gateway's own routes, frozen: its method, pattern, name, authentication, the
 * OpenAPI summary line, what serves it (a handler, or one of worker/routes/serve.ts for
 * one whose query or body is read before it runs) and the rest of its description (success status 200 and the success envelope
 * unless said otherwise).
 */
export function route<const Name extends string>(
  method: GatewayMethod,
  pattern: GatewayRoute['pattern'],
  name: Name,
  auth: GatewayAuth,
  summary: string,
  serve: RouteHandler | Served,
  options: RouteOptions = {},
): OwnRoute<Name> {
  const status = options.status ?? 200;
  const { query, body, handler }: Served = typeof serve === 'function' ? { handler: serve } : serve;
  return Object.freeze({
    endpoint: undefined,
    handler,
    idempotency: 'none',
    cache: undefined,
    name,
    method,
    pattern,
    auth,
    summary,
    status,
    body: body ?? options.body,
    query,
    response: status === 204 ? undefined : (options.response ?? SuccessEnvelopeSchema),
    extraErrors: options.extraErrors ?? [],
    failureResponse: options.failureResponse,
  });
}

/** A JSON body that must be sent. */
export const required = (schema: v.GenericSchema): GatewayBody => ({ schema, required: true });

// The proxy keeps the bank list and account resolutions in KV: both change rarely and
// are asked for often, and neither moves money.
const CACHED: Partial<Record<EndpointName, CachePolicy>> = {
  'banks.list': 'banks',
  'banks.resolve': 'resolve',
};

/**
 * The proxied route of an endpoint: a caller token, the endpoint's body and query schemas,
 * an `Idempotency-Key` required where the endpoint moves money and honoured on its other
 * writes, answered with the service's own success body.
 */
export function proxied(endpoint: NamedEndpoint): ProxyRoute {
  return Object.freeze({
    name: endpoint.name,
    method: endpoint.method,
    pattern: endpoint.path,
    auth: 'bearer',
    summary: undefined,
    status: 200,
    body: endpoint.body === undefined ? undefined : required(endpoint.body),
    query: endpoint.query,
    response: SuccessEnvelopeSchema,
    extraErrors: [],
    failureResponse: undefined,
    endpoint,
    idempotency: idempotencyOf(endpoint),
    cache: CACHED[endpoint.name],
  });
}
