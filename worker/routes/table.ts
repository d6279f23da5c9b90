// Every route the gateway answers, as data: its own (the health check, the OpenAPI
// document, the webhook ingress, the admin API), each with its handler, and one proxied
// route per endpoint of the SDK's endpoint table, served by the proxy pipeline.
// worker/router.ts registers each with the authentication it declares, and
// worker/openapi/document.ts describes each, so neither can drift. Handlers import
// nothing from here, so this file can import them.
import * as v from 'valibot';
import { listEndpoints } from '../../lib/index.ts';
import { OPENAPI_PATH } from '../openapi/components.ts';
import { WebhookEnvelopeSchema } from '../relay/envelope.ts';
import {
  ADMIN_DELIVERIES_PATH,
  countDeliveries,
  countDeliveriesHourly,
  DeliveryHourlyQuerySchema,
  DeliveryListQuerySchema,
  DeliveryRetrySchema,
  listDeliveries,
  retryDelivery,
} from './admin/deliveries.ts';
import { EventListQuerySchema, listEvents } from './admin/event-list.ts';
import { ADMIN_EVENT_TYPES_PATH, listEventTypes } from './admin/event-types.ts';
import { ADMIN_EVENTS_PATH, EventReplaySchema, getEvent, replayEvent } from './admin/events.ts';
import {
  ADMIN_RECOVER_PATH,
  getRecovery,
  listRecoveries,
  previewRecovery,
  RecoverySchema,
  startRecovery,
} from './admin/recover.ts';
import {
  createSchema,
  NewSubscriptionSchema,
  patchSchema,
  SubscriptionChangesSchema,
} from './admin/subscription-input.ts';
import { SubscriptionTestSchema, sendTestEvent } from './admin/subscription-test.ts';
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
import {
  type OwnRoute,
  type ProxyRoute,
  proxied,
  required,
  route,
  type ServedRoute,
} from './route.ts';
import { bodied, optionallyBodied, queried } from './serve.ts';
import { ingestWebhook, WEBHOOKS_PATH } from './webhooks.ts';

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
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const OWN_ROUTES: readonly OwnRoute[] = Object.freeze([
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
      failureResponse: {
        status: 503,
        description:
          'The settings are invalid (`status` `misconfigured`; `invalid_settings` names them ' +
          'only with `deep=1` and the admin token), ' +
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
    {
      body: required(WebhookEnvelopeSchema),
      response: WebhookAckSchema,
      // 409: a copy of the event is being stored under another generation of shards.
      extraErrors: [409, 503],
    },
  ),
  route(
    'POST',
    ADMIN_SUBSCRIPTIONS_PATH,
    'admin.subscriptions.create',
    'admin',
    'Create a subscription; the answer holds its secret (shown only here and on rotation).',
    bodied(NewSubscriptionSchema, createSubscription, (settings) =>
      createSchema(settings.subscribers),
    ),
    { status: 201 },
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
    bodied(SubscriptionChangesSchema, updateSubscription, (settings) =>
      patchSchema(settings.subscribers),
    ),
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
    'POST',
    `${SUBSCRIPTION}/test`,
    'admin.subscriptions.test',
    'admin',
    'Send a signed subscription.test event to this subscription only, whatever its event types.',
    optionallyBodied(SubscriptionTestSchema, sendTestEvent),
    { status: 202, extraErrors: [409] },
  ),
  route(
    'GET',
    ADMIN_EVENT_TYPES_PATH,
    'admin.event_types.list',
    'admin',
    'Every event type the relay knows, with a description and the JSON Schema of its data.',
    listEventTypes,
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
    optionallyBodied(EventReplaySchema, replayEvent),
    { status: 202, extraErrors: [409] },
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
    optionallyBodied(DeliveryRetrySchema, retryDelivery),
    { status: 202, extraErrors: [409] },
  ),
  route(
    'POST',
    ADMIN_RECOVER_PATH,
    'admin.deliveries.recover',
    'admin',
    'Start a job re-enqueuing every undelivered delivery matching a filter (or answer the running one); `Location` names the job.',
    bodied(RecoverySchema, startRecovery),
    { status: 202 },
  ),
  route(
    'GET',
    ADMIN_RECOVER_PATH,
    'admin.deliveries.recover_list',
    'admin',
    'The 20 most recently started recovery jobs, newest first.',
    listRecoveries,
  ),
  route(
    'POST',
    `${ADMIN_RECOVER_PATH}/preview`,
    'admin.deliveries.recover_preview',
    'admin',
    'Count the deliveries a recovery filter matches, without starting anything.',
    bodied(RecoverySchema, previewRecovery),
  ),
  route(
    'GET',
    `${ADMIN_RECOVER_PATH}/jobs/:id`,
    'admin.deliveries.recover_get',
    'admin',
    "A recovery job's progress.",
    getRecovery,
  ),
]);

/** The proxied routes, one per endpoint of the SDK's table, in the table's matching order. */
export const PROXY_ROUTES: readonly ProxyRoute[] = Object.freeze(listEndpoints().map(proxied));

/** Every route of the gateway: its own first, then the proxied ones. */
export const ROUTES: readonly ServedRoute[] = Object.freeze([...OWN_ROUTES, ...PROXY_ROUTES]);
