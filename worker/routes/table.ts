// Every route the gateway answers, as data: its own (the health check, the OpenAPI
// document, the webhook ingress, the admin API), each with its handler, and one proxied
// route per endpoint of the SDK's endpoint table, served by the proxy pipeline.
// worker/router.ts registers each with the authentication it declares, and
// worker/openapi/document.ts describes each, so neither can drift. Handlers import
// nothing from here but types, so this file can import them.
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import {
  type EndpointName,
  idempotencyOf,
  listEndpoints,
  type NamedEndpoint,
} from '../../lib/index.ts';
import { type QueryRule, readQuery } from '../http/query.ts';
import { OPENAPI_PATH, SuccessEnvelopeSchema } from '../openapi/components.ts';
import { openApiPath } from '../openapi/parameters.ts';
import { WebhookEnvelopeSchema } from '../relay/envelope.ts';
import {
  ADMIN_DELIVERIES_PATH,
  countDeliveries,
  countDeliveriesHourly,
  DeliveryHourlyQuerySchema,
  DeliveryListQuerySchema,
  listDeliveries,
  retryDelivery,
} from './admin/deliveries.ts';
import {
  ADMIN_EVENTS_PATH,
  EventListQuerySchema,
  EventReplaySchema,
  getEvent,
  listEvents,
  replayEvent,
} from './admin/events.ts';
import { NewSubscriptionSchema, SubscriptionChangesSchema } from './admin/subscription-input.ts';
import {
  ADMIN_SUBSCRIPTIONS_PATH,
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  updateSubscription,
} from './admin/subscriptions.ts';
import { HEALTH_PATH, HealthQuerySchema, HealthResponseSchema, health } from './health.ts';
import { openApiResponse } from './openapi.ts';
import { ingestWebhook, WEBHOOKS_PATH } from './webhooks.ts';

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
interface RouteFailureAnswer {
  readonly status: number;
  /** The OpenAPI response's description. */
  readonly description: string;
  readonly schema: v.GenericSchema;
}

/** A JSON request body: its valibot schema and whether it may be left out. */
interface GatewayBody {
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
  /** OpenAPI tag grouping the operation (the endpoint's resource for proxied routes). */
  readonly tag: string;
  readonly method: GatewayMethod;
  /** itty-router pattern; `:param` segments become OpenAPI path parameters. */
  readonly pattern: `/${string}`;
  readonly auth: GatewayAuth;
  /** One line for the OpenAPI `summary`. */
  readonly summary: string;
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
  readonly failureAnswer: RouteFailureAnswer | undefined;
  /** Proxied routes: the endpoint forwarded upstream with the same method and path. */
  readonly endpoint: NamedEndpoint | undefined;
  readonly idempotency: IdempotencyPolicy;
  /** Proxied routes whose answers are kept in KV. */
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
 * A handler of a route with a query schema: it is also given the query, validated by
 * the route's rule before it runs.
 */
export type QueryHandler<Query> = (
  request: IRequest,
  env: Env,
  ctx: ExecutionContext,
  query: Query,
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
  Pick<GatewayRoute, 'status' | 'body' | 'response' | 'extraErrors' | 'failureAnswer'>
>;

/** A handler with the query it reads: its schema and how strictly it is read. */
interface Queried {
  readonly query: v.GenericSchema;
  readonly handler: RouteHandler;
}

/**
 * The handler of a route reading a query string: the query is read by the gateway's one
 * reader, with the route's strictness, before the handler runs (400 `validation_failed`).
 *
 * @param schema - the query schema (values as strings).
 * @param rule - how strictly the route reads its query.
 * @param handler - the handler, given the schema's output.
 */
function queried<const Schema extends v.GenericSchema>(
  schema: Schema,
  rule: QueryRule,
  handler: QueryHandler<v.InferOutput<Schema>>,
): Queried {
  return {
    query: schema,
    handler: (request, env, ctx) =>
      handler(request, env, ctx, readQuery(schema, new URL(request.url).search, rule)),
  };
}

function route<const Name extends string>(
  method: GatewayMethod,
  pattern: GatewayRoute['pattern'],
  name: Name,
  auth: GatewayAuth,
  summary: string,
  serve: RouteHandler | Queried,
  options: RouteOptions = {},
): OwnRoute<Name> {
  const status = options.status ?? 200;
  const { query, handler } =
    typeof serve === 'function' ? { query: undefined, handler: serve } : serve;
  return Object.freeze({
    endpoint: undefined,
    handler,
    idempotency: 'none',
    cache: undefined,
    name,
    tag: auth === 'admin' ? 'admin' : auth === 'webhook-signature' ? 'webhooks' : 'gateway',
    method,
    pattern,
    auth,
    summary,
    status,
    body: options.body,
    query,
    response: status === 204 ? undefined : (options.response ?? SuccessEnvelopeSchema),
    extraErrors: options.extraErrors ?? [],
    failureAnswer: options.failureAnswer,
  });
}

const required = (schema: v.GenericSchema): GatewayBody => ({ schema, required: true });

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
function proxied(endpoint: NamedEndpoint): ProxyRoute {
  return Object.freeze({
    name: endpoint.name,
    tag: endpoint.name.split('.')[0] ?? endpoint.name,
    method: endpoint.method,
    pattern: endpoint.path,
    auth: 'bearer',
    summary: `${endpoint.method} ${openApiPath(endpoint.path)} on the payment service`,
    status: 200,
    body: endpoint.body === undefined ? undefined : required(endpoint.body),
    query: endpoint.query,
    response: SuccessEnvelopeSchema,
    extraErrors: [],
    failureAnswer: undefined,
    endpoint,
    idempotency: idempotencyOf(endpoint),
    cache: CACHED[endpoint.name],
  });
}
const SUBSCRIPTION = `${ADMIN_SUBSCRIPTIONS_PATH}/:id` as const;
const EVENT = `${ADMIN_EVENTS_PATH}/:id` as const;

/** `POST /webhooks`'s body: the stored event's id, and whether it was a repeat. */
const WebhookAckSchema = v.object({
  status: v.literal('success'),
  event_id: v.string(),
  duplicate: v.boolean(),
});

/** `GET /openapi.json`'s body: an OpenAPI document (its other members are not restated). */
const OpenApiDocumentSchema = v.looseObject({ openapi: v.string() });

/**
 * The routes the gateway answers itself, in registration order (a literal segment before
 * a `:param` that would also match it): the health check, the OpenAPI document, the
 * webhook ingress and the admin API, each with its handler.
 */
export const OWN_ROUTES = Object.freeze([
  route(
    'GET',
    HEALTH_PATH,
    'health',
    'none-or-admin',
    'Liveness check, open; with ?deep=1 (admin token) a check of D1, KV, the queue and the upstream.',
    // Only `deep` is read: a load balancer's cache-buster must not make a probe a 400.
    queried(HealthQuerySchema, 'declared-once', health),
    {
      response: HealthResponseSchema,
      failureAnswer: {
        status: 503,
        description:
          'The settings are invalid (`status` `misconfigured`, `invalid_settings` names them), ' +
          'or with `deep=1` a probe failed (`status` `degraded`, the failed checks say why).',
        schema: HealthResponseSchema,
      },
    },
  ),
  route(
    'GET',
    OPENAPI_PATH,
    'openapi',
    'bearer',
    'This document.',
    // Every route, this table's own included: read when asked, once the table exists.
    () => openApiResponse(ROUTES),
    { response: OpenApiDocumentSchema },
  ),
  route(
    'POST',
    WEBHOOKS_PATH,
    'webhooks.ingest',
    'webhook-signature',
    'Webhook ingress: stores the event and fans it out to the matching subscriptions.',
    ingestWebhook,
    { body: required(WebhookEnvelopeSchema), response: WebhookAckSchema, extraErrors: [503] },
  ),
  route(
    'POST',
    ADMIN_SUBSCRIPTIONS_PATH,
    'admin.subscriptions.create',
    'admin',
    'Create a subscription; the answer holds its secret (shown only here and on rotation).',
    createSubscription,
    { status: 201, body: required(NewSubscriptionSchema) },
  ),
  route(
    'GET',
    ADMIN_SUBSCRIPTIONS_PATH,
    'admin.subscriptions.list',
    'admin',
    'Every subscription, newest first, without secrets.',
    listSubscriptions,
  ),
  route(
    'GET',
    SUBSCRIPTION,
    'admin.subscriptions.get',
    'admin',
    'One subscription.',
    getSubscription,
  ),
  route(
    'PATCH',
    SUBSCRIPTION,
    'admin.subscriptions.update',
    'admin',
    'Change any of url, event_types, description, enabled.',
    updateSubscription,
    { body: required(SubscriptionChangesSchema) },
  ),
  route(
    'DELETE',
    SUBSCRIPTION,
    'admin.subscriptions.delete',
    'admin',
    'Delete a subscription.',
    deleteSubscription,
    { status: 204 },
  ),
  route(
    'POST',
    `${SUBSCRIPTION}/rotate-secret`,
    'admin.subscriptions.rotate_secret',
    'admin',
    'A new secret, shown once; the previous one keeps signing for 24 h.',
    rotateSubscriptionSecret,
  ),
  route(
    'GET',
    ADMIN_EVENTS_PATH,
    'admin.events.list',
    'admin',
    'Events, newest first.',
    queried(EventListQuerySchema, 'every-once', listEvents),
  ),
  route(
    'GET',
    EVENT,
    'admin.events.get',
    'admin',
    'One event with its deliveries and their attempts.',
    getEvent,
  ),
  route(
    'POST',
    `${EVENT}/replay`,
    'admin.events.replay',
    'admin',
    'Deliver the event again: to every matching enabled subscription, or to the one named.',
    replayEvent,
    { status: 202, body: { schema: EventReplaySchema, required: false }, extraErrors: [409] },
  ),
  route(
    'GET',
    ADMIN_DELIVERIES_PATH,
    'admin.deliveries.list',
    'admin',
    'Deliveries, most recently updated first, with their event type.',
    queried(DeliveryListQuerySchema, 'every-once', listDeliveries),
  ),
  route(
    'GET',
    `${ADMIN_DELIVERIES_PATH}/counts`,
    'admin.deliveries.counts',
    'admin',
    'Deliveries counted by status.',
    countDeliveries,
  ),
  route(
    'GET',
    `${ADMIN_DELIVERIES_PATH}/hourly`,
    'admin.deliveries.hourly',
    'admin',
    'Deliveries counted per UTC hour of creation, by current status, oldest hour first.',
    queried(DeliveryHourlyQuerySchema, 'every-once', countDeliveriesHourly),
  ),
  route(
    'POST',
    `${ADMIN_DELIVERIES_PATH}/:id/retry`,
    'admin.deliveries.retry',
    'admin',
    'Reset one delivery to pending, due now, and enqueue it.',
    retryDelivery,
    { status: 202 },
  ),
]);

/** The proxied routes, one per endpoint of the SDK's table, in the table's matching order. */
export const PROXY_ROUTES: readonly ProxyRoute[] = Object.freeze(listEndpoints().map(proxied));

/** Every route of the gateway: its own first, then the proxied ones. */
export const ROUTES: readonly ServedRoute[] = Object.freeze([...OWN_ROUTES, ...PROXY_ROUTES]);
