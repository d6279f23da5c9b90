// Every route the gateway answers, as data: its own (the health check, the OpenAPI
// document, the webhook ingress, the admin API) and one proxied route per endpoint of the
// SDK's endpoint table. worker/router.ts registers each with the authentication it
// declares, and worker/openapi/document.ts describes each, so neither can drift.
import * as v from 'valibot';
import {
  type EndpointName,
  idempotencyOf,
  listEndpoints,
  type NamedEndpoint,
} from '../../lib/index.ts';
import {
  BODY_ONLY_STATUSES,
  ERROR_RESPONSES,
  OPENAPI_PATH,
  SuccessEnvelopeSchema,
} from '../openapi/components.ts';
import { openApiPath } from '../openapi/parameters.ts';
import { WebhookEnvelopeSchema } from '../relay/envelope.ts';
import {
  ADMIN_DELIVERIES_PATH,
  DeliveryHourlyQuerySchema,
  DeliveryListQuerySchema,
} from './admin/deliveries.ts';
import { ADMIN_EVENTS_PATH, EventListQuerySchema, EventReplaySchema } from './admin/events.ts';
import { NewSubscriptionSchema, SubscriptionChangesSchema } from './admin/subscription-input.ts';
import { ADMIN_SUBSCRIPTIONS_PATH } from './admin/subscriptions.ts';
import { HEALTH_PATH, HealthQuerySchema, HealthResponseSchema } from './health.ts';
import { WEBHOOKS_PATH } from './webhooks.ts';

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

/** A proxied route: a {@link GatewayRoute} with its endpoint. */
export interface ProxyRoute extends GatewayRoute<EndpointName> {
  readonly endpoint: NamedEndpoint;
}

type RouteOptions = Partial<
  Pick<GatewayRoute, 'status' | 'body' | 'query' | 'response' | 'extraErrors' | 'failureAnswer'>
>;

function route<const Name extends string>(
  method: GatewayMethod,
  pattern: GatewayRoute['pattern'],
  name: Name,
  auth: GatewayAuth,
  summary: string,
  options: RouteOptions = {},
): GatewayRoute<Name> {
  const status = options.status ?? 200;
  return Object.freeze({
    endpoint: undefined,
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
    query: options.query,
    response: status === 204 ? undefined : (options.response ?? SuccessEnvelopeSchema),
    extraErrors: options.extraErrors ?? [],
    failureAnswer: options.failureAnswer,
  });
}

const required = (schema: v.GenericSchema): GatewayBody => ({ schema, required: true });
const PROXY_ERROR_STATUSES = ERROR_RESPONSES.map((response) => response.status);

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
 * webhook ingress and the admin API. Each has a handler in worker/router.ts by name.
 */
export const OWN_ROUTES = Object.freeze([
  route(
    'GET',
    HEALTH_PATH,
    'health',
    'none-or-admin',
    'Liveness check, open; with ?deep=1 (admin token) a check of D1, KV, the queue and the upstream.',
    {
      query: HealthQuerySchema,
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
  route('GET', OPENAPI_PATH, 'openapi', 'bearer', 'This document.', {
    response: OpenApiDocumentSchema,
  }),
  route(
    'POST',
    WEBHOOKS_PATH,
    'webhooks.ingest',
    'webhook-signature',
    'Webhook ingress: stores the event and fans it out to the matching subscriptions.',
    { body: required(WebhookEnvelopeSchema), response: WebhookAckSchema, extraErrors: [503] },
  ),
  route(
    'POST',
    ADMIN_SUBSCRIPTIONS_PATH,
    'admin.subscriptions.create',
    'admin',
    'Create a subscription; the answer holds its secret (shown only here and on rotation).',
    { status: 201, body: required(NewSubscriptionSchema) },
  ),
  route(
    'GET',
    ADMIN_SUBSCRIPTIONS_PATH,
    'admin.subscriptions.list',
    'admin',
    'Every subscription, newest first, without secrets.',
  ),
  route('GET', SUBSCRIPTION, 'admin.subscriptions.get', 'admin', 'One subscription.'),
  route(
    'PATCH',
    SUBSCRIPTION,
    'admin.subscriptions.update',
    'admin',
    'Change any of url, event_types, description, enabled.',
    { body: required(SubscriptionChangesSchema) },
  ),
  route('DELETE', SUBSCRIPTION, 'admin.subscriptions.delete', 'admin', 'Delete a subscription.', {
    status: 204,
  }),
  route(
    'POST',
    `${SUBSCRIPTION}/rotate-secret`,
    'admin.subscriptions.rotate_secret',
    'admin',
    'A new secret, shown once; the previous one keeps signing for 24 h.',
  ),
  route('GET', ADMIN_EVENTS_PATH, 'admin.events.list', 'admin', 'Events, newest first.', {
    query: EventListQuerySchema,
  }),
  route(
    'GET',
    EVENT,
    'admin.events.get',
    'admin',
    'One event with its deliveries and their attempts.',
  ),
  route(
    'POST',
    `${EVENT}/replay`,
    'admin.events.replay',
    'admin',
    'Deliver the event again: to every matching enabled subscription, or to the one named.',
    { status: 202, body: { schema: EventReplaySchema, required: false }, extraErrors: [409] },
  ),
  route(
    'GET',
    ADMIN_DELIVERIES_PATH,
    'admin.deliveries.list',
    'admin',
    'Deliveries, most recently updated first, with their event type.',
    { query: DeliveryListQuerySchema },
  ),
  route(
    'GET',
    `${ADMIN_DELIVERIES_PATH}/counts`,
    'admin.deliveries.counts',
    'admin',
    'Deliveries counted by status.',
  ),
  route(
    'GET',
    `${ADMIN_DELIVERIES_PATH}/hourly`,
    'admin.deliveries.hourly',
    'admin',
    'Deliveries counted per UTC hour of creation, by current status, oldest hour first.',
    { query: DeliveryHourlyQuerySchema },
  ),
  route(
    'POST',
    `${ADMIN_DELIVERIES_PATH}/:id/retry`,
    'admin.deliveries.retry',
    'admin',
    'Reset one delivery to pending, due now, and enqueue it.',
    { status: 202 },
  ),
]);

/** The name of one of the gateway's own routes; the router needs one handler for each. */
export type OwnRouteName = (typeof OWN_ROUTES)[number]['name'];

/** The proxied routes, one per endpoint of the SDK's table, in the table's matching order. */
export const PROXY_ROUTES: readonly ProxyRoute[] = Object.freeze(listEndpoints().map(proxied));

/** Every route of the gateway: its own first, then the proxied ones. */
export const ROUTES: readonly GatewayRoute[] = Object.freeze([...OWN_ROUTES, ...PROXY_ROUTES]);

/**
 * The error statuses a route can answer. A proxied route: every status of the proxy's
 * error table (the upstream's own errors pass through with their status), 413 and 415
 * only when it takes a body. One of the gateway's own routes: 401 unless open, 429 where
 * the admin token is taken (failed sign-ins are throttled), 400 when
 * it validates a body or a query, 413 and 415 with a body, 404 with a path parameter (an
 * unknown record), 500 unless it touches nothing, and the route's `extraErrors`. A
 * `failureAnswer`'s status is not among them: it is answered with the route's own body.
 *
 * @param route - the route.
 * @returns the statuses, ascending.
 */
export function errorStatuses(route: GatewayRoute): number[] {
  if (route.endpoint !== undefined) {
    const takesBody = route.method !== 'GET';
    return PROXY_ERROR_STATUSES.filter((status) => takesBody || !BODY_ONLY_STATUSES.has(status));
  }
  const statuses = new Set<number>(route.extraErrors);
  if (route.auth !== 'none') statuses.add(401).add(500);
  // Failed admin sign-ins are throttled per client address.
  if (route.auth === 'admin' || route.auth === 'none-or-admin') statuses.add(429);
  if (route.body !== undefined || route.query !== undefined) statuses.add(400);
  if (route.body !== undefined) statuses.add(413).add(415);
  if (route.pattern.includes('/:')) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}
