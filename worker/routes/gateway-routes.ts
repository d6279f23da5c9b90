// The gateway's own routes as data (DESIGN 4.1 to 4.3): the health check, the OpenAPI
// document, the webhook ingress and the admin API. worker/router.ts registers a handler for
// each (by name) and worker/openapi/document.ts describes each, so neither can drift.
import * as v from 'valibot';
import { OPENAPI_PATH, SuccessEnvelopeSchema } from '../openapi/components.ts';
import { WebhookEnvelopeSchema } from '../relay/envelope.ts';
import { ADMIN_DELIVERIES_PATH } from './admin/deliveries.ts';
import { ADMIN_EVENTS_PATH, EventListQuerySchema, EventReplaySchema } from './admin/events.ts';
import { NewSubscriptionSchema, SubscriptionChangesSchema } from './admin/subscription-input.ts';
import { ADMIN_SUBSCRIPTIONS_PATH } from './admin/subscriptions.ts';
import { HEALTH_PATH } from './health.ts';
import { WEBHOOKS_PATH } from './webhooks.ts';

/** Methods the gateway's own routes use. */
export type GatewayMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * How a gateway route authenticates its caller: `none` (DESIGN 4.1: the health check),
 * `bearer` (a caller token), `admin` (`ADMIN_TOKEN`, DESIGN 4.3) or `webhook-signature`
 * (the payment service's HMAC headers, DESIGN 4.2).
 */
export type GatewayAuth = 'none' | 'bearer' | 'admin' | 'webhook-signature';

/** Success statuses of the gateway's own routes (204 answers without a body). */
export type SuccessStatus = 200 | 201 | 202 | 204;

/** A JSON request body: its valibot schema and whether it may be left out. */
export interface GatewayBody {
  readonly schema: v.GenericSchema;
  readonly required: boolean;
}

/** One route the gateway answers itself (not proxied). */
export interface GatewayRoute<Name extends string = string> {
  /** The handler's `routeName` (access log) and the OpenAPI `operationId`. */
  readonly name: Name;
  /** OpenAPI tag grouping the operation. */
  readonly tag: 'gateway' | 'webhooks' | 'admin';
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
}

type RouteOptions = Partial<
  Pick<GatewayRoute, 'status' | 'body' | 'query' | 'response' | 'extraErrors'>
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
  });
}

const required = (schema: v.GenericSchema): GatewayBody => ({ schema, required: true });
const SUBSCRIPTION = `${ADMIN_SUBSCRIPTIONS_PATH}/:id` as const;
const EVENT = `${ADMIN_EVENTS_PATH}/:id` as const;

/** `GET /healthz`'s body. */
export const HealthResponseSchema = v.object({ status: v.literal('ok') });

/** `POST /webhooks`'s body (DESIGN 4.2): the stored event's id, and whether it was a repeat. */
export const WebhookAckSchema = v.object({
  status: v.literal('success'),
  event_id: v.string(),
  duplicate: v.boolean(),
});

/** `GET /openapi.json`'s body: an OpenAPI document (its other members are not restated). */
export const OpenApiDocumentSchema = v.looseObject({ openapi: v.string() });

/**
 * Every route the gateway answers itself, in registration order (a literal segment before
 * a `:param` that would also match it): health (DESIGN 4.1), this document (issue 4 point
 * 8), the webhook ingress (DESIGN 4.2) and the admin API (DESIGN 4.3). The proxied routes
 * are `UPSTREAM_ROUTES` (worker/upstream/routes.ts).
 */
export const GATEWAY_ROUTES = Object.freeze([
  route('GET', HEALTH_PATH, 'health', 'none', 'Liveness check; needs no token.', {
    response: HealthResponseSchema,
  }),
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
    { status: 202, body: { schema: EventReplaySchema, required: false } },
  ),
  route(
    'GET',
    `${ADMIN_DELIVERIES_PATH}/counts`,
    'admin.deliveries.counts',
    'admin',
    'Deliveries counted by status.',
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

/** The name of a gateway route; the router needs one handler for each. */
export type GatewayRouteName = (typeof GATEWAY_ROUTES)[number]['name'];

/**
 * The error statuses a gateway route can answer (DESIGN 4.5): 401 unless open, 400 when it
 * validates a body or a query, 413 and 415 with a body, 404 with a path parameter (an
 * unknown record), 500 unless it touches nothing, and the route's `extraErrors`.
 *
 * @param route - the route.
 * @returns the statuses, ascending.
 */
export function gatewayErrorStatuses(route: GatewayRoute): number[] {
  const statuses = new Set<number>(route.extraErrors);
  if (route.auth !== 'none') statuses.add(401).add(500);
  if (route.body !== undefined || route.query !== undefined) statuses.add(400);
  if (route.body !== undefined) statuses.add(413).add(415);
  if (route.pattern.includes('/:')) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}
