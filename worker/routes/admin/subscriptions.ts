/**
 * The admin API's subscription routes (`/admin/subscriptions`): create,
 * list, get, update, delete, rotate secret. The admin guard (`requireAdmin`, mounted on every admin route) has
 * already checked `ADMIN_TOKEN`. A secret is in the response only of create and rotate.
 */
import type { IRequest } from 'itty-router';
import type * as v from 'valibot';
import type { SubscriptionRecord } from '../../db/subscriptions.ts';
import * as subscriptions from '../../db/subscriptions.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import {
  generateSubscriptionSecret,
  PREVIOUS_SECRET_VALID_MS,
} from '../../relay/subscription-secret.ts';
import {
  type NewSubscriptionSchema,
  newSubscriptionInput,
  type SubscriptionChangesSchema,
  subscriptionChanges,
} from './subscription-input.ts';

/** Path of the subscription collection; one subscription is `${path}/:id`. */
export const ADMIN_SUBSCRIPTIONS_PATH = '/admin/subscriptions';

/** A subscription as the admin API shows it (times ISO 8601 UTC); never a secret. */
interface SubscriptionView {
  id: string;
  url: string;
  /** `null` = every event type. */
  event_types: readonly string[] | null;
  description: string | null;
  enabled: boolean;
  /** Until when the last replaced secret is still signed with; `null` when none is (earlier ones expire sooner). */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The admin view of a record: no secret, and a previous secret's expiry only while
 * it is still in use.
 *
 * @param record - the stored subscription.
 * @param now - the current time, epoch milliseconds.
 */
function toSubscriptionView(record: SubscriptionRecord, now: number): SubscriptionView {
  // The replaced secrets are newest first: the first still in use lasts longest.
  const expiresAt = record.previousSecrets.find((replaced) => replaced.expiresAt > now)?.expiresAt;
  return {
    id: record.id,
    url: record.url,
    event_types: record.eventTypes,
    description: record.description,
    enabled: record.enabled,
    previous_secret_expires_at: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
    created_at: new Date(record.createdAt).toISOString(),
    updated_at: new Date(record.updatedAt).toISOString(),
  };
}

/**
 * `POST /admin/subscriptions` `{ url, event_types?, description?, enabled? }`. Its row
 * reads the body first (415, 413, or 400 `validation_failed` with every issue, URL rules
 * at `url`).
 *
 * @param body - the validated body.
 * @returns 201 `{ status: 'success', data }`, `data` with the new `secret` (shown only here and on rotate).
 *
 * @example
 * ```ts
 * route('POST', ADMIN_SUBSCRIPTIONS_PATH, name, 'admin', summary, bodied(NewSubscriptionSchema, createSubscription));
 * ```
 */
export async function createSubscription(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof NewSubscriptionSchema>,
): Promise<Response> {
  const input = newSubscriptionInput(body);
  const now = Date.now();
  const record: SubscriptionRecord = {
    id: `sub_${crypto.randomUUID()}`,
    ...input,
    secret: generateSubscriptionSecret(),
    previousSecrets: [],
    createdAt: now,
    updatedAt: now,
  };
  await subscriptions.insertSubscription(env.DB, record);
  audit(request, 'subscription_created', record.id);
  const data = { ...toSubscriptionView(record, now), secret: record.secret };
  return jsonResponse({ status: 'success', data }, { status: 201 });
}

/** `GET /admin/subscriptions`: every subscription, newest first, without secrets. */
export async function listSubscriptions(_request: IRequest, env: Env): Promise<Response> {
  const now = Date.now();
  const records = await subscriptions.listSubscriptions(env.DB);
  return jsonResponse({ status: 'success', data: records.map((r) => toSubscriptionView(r, now)) });
}

/**
 * `GET /admin/subscriptions/:id`, without the secret.
 *
 * @throws {HttpError} 404 `not_found`.
 */
export async function getSubscription(request: IRequest, env: Env): Promise<Response> {
  const id = idOf(request);
  const record = found(id, await subscriptions.findSubscription(env.DB, id));
  return jsonResponse({ status: 'success', data: toSubscriptionView(record, Date.now()) });
}

/**
 * `PATCH /admin/subscriptions/:id` with any of `url`, `event_types`, `description`,
 * `enabled`; the others are kept. Its row reads the body first (415, 413, or 400
 * `validation_failed`).
 *
 * @param body - the validated body.
 * @throws {HttpError} 404 `not_found` (checked after the body).
 */
export async function updateSubscription(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof SubscriptionChangesSchema>,
): Promise<Response> {
  const id = idOf(request);
  const changes = subscriptionChanges(body);
  const now = Date.now();
  const record = found(id, await subscriptions.updateSubscription(env.DB, id, changes, now));
  audit(request, 'subscription_updated', id);
  return jsonResponse({ status: 'success', data: toSubscriptionView(record, now) });
}

/**
 * `DELETE /admin/subscriptions/:id`.
 *
 * @returns 204 without a body.
 * @throws {HttpError} 404 `not_found`.
 */
export async function deleteSubscription(request: IRequest, env: Env): Promise<Response> {
  const id = idOf(request);
  if (!(await subscriptions.deleteSubscription(env.DB, id))) throw notFound(id);
  audit(request, 'subscription_deleted', id);
  return new Response(null, { status: 204 });
}

/**
 * `POST /admin/subscriptions/:id/rotate-secret`: a new secret, shown once; the old one
 * stays in use for {@link PREVIOUS_SECRET_VALID_MS} (24 h), deliveries signed with both.
 *
 * @returns 200 `{ status: 'success', data }`, `data` with the new `secret` and `previous_secret_expires_at`.
 * @throws {HttpError} 404 `not_found`.
 */
export async function rotateSubscriptionSecret(request: IRequest, env: Env): Promise<Response> {
  const id = idOf(request);
  const now = Date.now();
  const rotation = {
    secret: generateSubscriptionSecret(),
    now,
    previousValidForMs: PREVIOUS_SECRET_VALID_MS,
  };
  const record = found(id, await subscriptions.rotateSubscriptionSecret(env.DB, id, rotation));
  audit(request, 'subscription_secret_rotated', id);
  const data = { ...toSubscriptionView(record, now), secret: record.secret };
  return jsonResponse({ status: 'success', data });
}

function idOf(request: IRequest): string {
  return request.params.id ?? '';
}

function found(id: string, record: SubscriptionRecord | undefined): SubscriptionRecord {
  if (record === undefined) throw notFound(id);
  return record;
}

function notFound(id: string): HttpError {
  // JSON.stringify keeps control characters of a hostile id out of the message.
  return new HttpError(404, 'not_found', `No subscription ${JSON.stringify(id)}`);
}

/** One log line per change (never a secret), so who changed what can be traced by request id. */
function audit(request: IRequest, event: string, subscriptionId: string): void {
  logEvent('info', event, {
    request_id: contextOf(request).requestId,
    subscription_id: subscriptionId,
  });
}
