/**
 * The admin API's subscription routes (`/admin/subscriptions`): create,
 * list, get, update (and re-enable with re-queue), delete, rotate secret. The admin guard
 * (`requireAdmin`, mounted on every admin route) has already checked `ADMIN_TOKEN`. A secret
 * is in the response only of create and rotate. Every view carries the subscriber's health.
 */
import type { IRequest } from 'itty-router';
import type * as v from 'valibot';
import { forgetSubscriptions } from '../../db/subscription-cache.ts';
import type { SubscriptionRecord } from '../../db/subscriptions.ts';
import * as subscriptions from '../../db/subscriptions.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { announceDisabled, recentAttempts } from '../../relay/subscriber-health.ts';
import {
  generateSubscriptionSecret,
  PREVIOUS_SECRET_VALID_MS,
} from '../../relay/subscription-secret.ts';
import { operatorOf } from './operator.ts';
import {
  type NewSubscriptionSchema,
  newSubscriptionInput,
  type SubscriptionChangesSchema,
  subscriptionPatch,
} from './subscription-input.ts';
import { reenableEffects } from './subscription-reenable.ts';
import { toSubscriptionView, viewWithRate } from './subscription-view.ts';

/** Path of the subscription collection; one subscription is `${path}/:id`. */
export const ADMIN_SUBSCRIPTIONS_PATH = '/admin/subscriptions';

/**
 * `POST /admin/subscriptions` `{ url, event_types?, description?, enabled?, max_per_second?,
 * max_in_flight?, ordered? }`. Its row
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
  const stored = {
    id: `sub_${crypto.randomUUID()}`,
    ...input,
    secret: generateSubscriptionSecret(),
    previousSecrets: [],
    createdAt: now,
    updatedAt: now,
  };
  await subscriptions.insertSubscription(env.DB, stored);
  forgetSubscriptions();
  audit(request, 'subscription_created', stored.id);
  const record: SubscriptionRecord = { ...stored, health: subscriptions.initialHealth(stored) };
  const data = { ...toSubscriptionView(record, now, undefined), secret: record.secret };
  return jsonResponse({ status: 'success', data }, { status: 201 });
}

/** `GET /admin/subscriptions`: every subscription, newest first, without secrets. */
export async function listSubscriptions(_request: IRequest, env: Env): Promise<Response> {
  const now = Date.now();
  const records = await subscriptions.listSubscriptions(env.DB);
  const attempts = await recentAttempts(
    env,
    records.map((r) => r.id),
    now,
  );
  const data = records.map((r) => toSubscriptionView(r, now, attempts.get(r.id)));
  return jsonResponse({ status: 'success', data });
}

/**
 * `GET /admin/subscriptions/:id`, without the secret.
 *
 * @throws {HttpError} 404 `not_found`.
 */
export async function getSubscription(request: IRequest, env: Env): Promise<Response> {
  const id = idOf(request);
  const record = found(id, await subscriptions.findSubscription(env.DB, id));
  return jsonResponse({ status: 'success', data: await viewWithRate(env, record, Date.now()) });
}

/**
 * `PATCH /admin/subscriptions/:id` with any of `url`, `event_types`, `description`,
 * `enabled`, `max_per_second`, `max_in_flight`, `ordered`; the others are kept. Its row
 * reads the body first (415, 413, or 400 `validation_failed`).
 *
 * `enabled: false` on an enabled subscription records "disabled by an operator" and
 * announces `subscription.disabled`. `enabled: true` on a disabled one makes it `healthy`
 * and answers `missed_events` `{ count, capped }`: the events that arrived while it was
 * disabled, that it matches, and that made no delivery for it. With `requeue_pending: true`
 * its pending deliveries and those failed since it began failing (or, without a run of
 * failures, since it was disabled) are set pending, due now, and enqueued (their attempts
 * recorded with trigger `recover` and the operator, the Cloudflare Access user when
 * present), and a recovery job of kind `missed_events` writes and enqueues the missed
 * events' deliveries page by page; `requeued` says how many were re-enqueued (0 when it was
 * not disabled), `recovery_job` is the job (`null` when nothing was missed).
 *
 * @param body - the validated body.
 * @returns 200 `{ status: 'success', data }`, `data` the subscription view, plus `requeued`
 *   when `requeue_pending` was asked, and `missed_events` (and `recovery_job` with
 *   `requeue_pending`) when this request enabled it again.
 * @throws {HttpError} 404 `not_found` (checked after the body).
 */
export async function updateSubscription(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof SubscriptionChangesSchema>,
): Promise<Response> {
  const id = idOf(request);
  const { changes, requeuePending } = subscriptionPatch(body);
  // Read before anything changes: a malformed Access header is refused, not half-applied.
  const operator = operatorOf(request, undefined);
  const now = Date.now();
  const update = await subscriptions.updateSubscription(env.DB, id, changes, now);
  if (update === undefined) throw notFound(id);
  const { record, before } = update;
  await changed(env, id);
  audit(request, 'subscription_updated', id);
  if (before.enabled && !record.enabled) {
    const reason = subscriptions.OPERATOR_DISABLED_REASON;
    await announceDisabled(env, { subscriptionId: id, url: record.url, at: now, reason });
  }
  // Only a subscription this request enabled again has deliveries and events waiting for it.
  const effects =
    !before.enabled && record.enabled
      ? await reenableEffects(request, env, before, { requeuePending, operator })
      : requeuePending
        ? { requeued: 0 }
        : {};
  const view = await viewWithRate(env, record, now);
  return jsonResponse({ status: 'success', data: { ...view, ...effects } });
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
  await changed(env, id);
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
  await changed(env, id);
  audit(request, 'subscription_secret_rotated', id);
  const data = { ...(await viewWithRate(env, record, now)), secret: record.secret };
  return jsonResponse({ status: 'success', data });
}

/**
 * After a change is stored: this isolate forgets its copy of the subscriptions, and the
 * subscription's outbox is told, so its next attempt reads the change (a new secret, a
 * disable) at once; other isolates see it within `SUBSCRIPTION_CACHE_SEC`. Telling the outbox
 * may fail (the change stands; the outbox's copy then lasts at most that long): logged.
 */
async function changed(env: Env, id: string): Promise<void> {
  forgetSubscriptions();
  try {
    await env.SUBSCRIBER_OUTBOX.getByName(id).subscriptionChanged();
  } catch (error) {
    logEvent('warn', 'subscription_change_not_told', {
      subscription_id: id,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
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
