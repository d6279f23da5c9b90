/**
 * The admin API's subscription routes (`/admin/subscriptions`): create,
 * list, get, update (and re-enable with re-queue), delete, rotate secret. The admin guard
 * (`requireAdmin`, mounted on every admin route) has already checked `ADMIN_TOKEN`. A secret
 * is in the response only of create and rotate. Every view carries the subscriber's health.
 */
import type { IRequest } from 'itty-router';
import type * as v from 'valibot';
import {
  type AttemptCounts,
  countRecentAttempts,
  requeueSubscriptionDeliveries,
} from '../../db/subscription-health.ts';
import type { SubscriptionRecord } from '../../db/subscriptions.ts';
import * as subscriptions from '../../db/subscriptions.ts';
import { contextOf } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { enqueueRequestedDeliveries } from '../../relay/operator-request.ts';
import {
  announceDisabled,
  type HealthState,
  healthState,
  successRateView,
} from '../../relay/subscriber-health.ts';
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

/** Path of the subscription collection; one subscription is `${path}/:id`. */
export const ADMIN_SUBSCRIPTIONS_PATH = '/admin/subscriptions';

/** A subscription as the admin API shows it (times ISO 8601 UTC); never a secret. */
export interface SubscriptionView {
  id: string;
  url: string;
  /** `null` = every event type. */
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  /** Most attempts a second; `null` = no limit. */
  max_per_second: number | null;
  /** Most attempts at the same time; `null` = the relay's default. */
  max_in_flight: number | null;
  ordered: boolean;
  health: HealthView;
  /** Until when the last replaced secret is still signed with; `null` when none is (earlier ones expire sooner). */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A subscriber's health as the admin API shows it. */
interface HealthView {
  state: HealthState;
  /** Why it last changed; `null` when it never did since created. */
  reason: string | null;
  /** When it last changed. */
  changed_at: string;
  /** When the current run of failed attempts began; `null` when the last attempt succeeded. */
  failing_since: string | null;
  disabled_at: string | null;
  /** Attempts over the last day and the share that succeeded. */
  success_rate: ReturnType<typeof successRateView>;
}

/**
 * The admin view of a record: no secret, and a previous secret's expiry only while
 * it is still in use.
 *
 * @param record - the stored subscription.
 * @param now - the current time, epoch milliseconds.
 * @param attempts - its attempts over the success-rate window; `undefined` = none.
 */
function toSubscriptionView(
  record: SubscriptionRecord,
  now: number,
  attempts: AttemptCounts | undefined,
): SubscriptionView {
  // The replaced secrets are newest first: the first still in use lasts longest.
  const expiresAt = record.previousSecrets.find((replaced) => replaced.expiresAt > now)?.expiresAt;
  const { health } = record;
  return {
    id: record.id,
    url: record.url,
    event_types: record.eventTypes === null ? null : [...record.eventTypes],
    description: record.description,
    enabled: record.enabled,
    max_per_second: record.maxPerSecond,
    max_in_flight: record.maxInFlight,
    ordered: record.ordered,
    health: {
      state: healthState(record),
      reason: health.reason,
      changed_at: iso(health.changedAt),
      failing_since: health.failingSince === null ? null : iso(health.failingSince),
      disabled_at: health.disabledAt === null ? null : iso(health.disabledAt),
      success_rate: successRateView(attempts),
    },
    previous_secret_expires_at: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
  };
}

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
  audit(request, 'subscription_created', stored.id);
  const record: SubscriptionRecord = { ...stored, health: subscriptions.initialHealth(stored) };
  const data = { ...toSubscriptionView(record, now, undefined), secret: record.secret };
  return jsonResponse({ status: 'success', data }, { status: 201 });
}

/** `GET /admin/subscriptions`: every subscription, newest first, without secrets. */
export async function listSubscriptions(_request: IRequest, env: Env): Promise<Response> {
  const now = Date.now();
  const records = await subscriptions.listSubscriptions(env.DB);
  const attempts = await countRecentAttempts(
    env.DB,
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
 * announces `subscription.disabled`. `enabled: true` on a disabled one makes it `healthy`;
 * with `requeue_pending: true` its pending deliveries and those failed since it began
 * failing (or, without a run of failures, since it was disabled) are set pending, due now,
 * and enqueued (their attempts recorded with trigger `recover` and the operator, the
 * Cloudflare Access user when present); `requeued` in the answer says how many (0 when it
 * was not disabled).
 *
 * @param body - the validated body.
 * @returns 200 `{ status: 'success', data }`, `data` the subscription view, plus `requeued`
 *   when `requeue_pending` was asked.
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
  audit(request, 'subscription_updated', id);
  if (before.enabled && !record.enabled) {
    const reason = subscriptions.OPERATOR_DISABLED_REASON;
    await announceDisabled(env, { subscriptionId: id, url: record.url, at: now, reason });
  }
  // Only a subscription this request enabled again has deliveries waiting for it.
  const requeued = !requeuePending
    ? undefined
    : before.enabled || !record.enabled
      ? 0
      : await requeueWaiting(request, env, before, { now, operator });
  const view = await viewWithRate(env, record, now);
  const data = requeued === undefined ? view : { ...view, requeued };
  return jsonResponse({ status: 'success', data });
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
  const data = { ...(await viewWithRate(env, record, now)), secret: record.secret };
  return jsonResponse({ status: 'success', data });
}

/**
 * Re-enqueues what waited for a subscription while it was disabled: its pending deliveries
 * and those failed since its run of failures began (an operator's disable of a healthy
 * subscription has none: since it was disabled). Their attempts are recorded as a recovery
 * the operator asked for.
 *
 * @param before - the subscription as it was, disabled.
 * @param at - the time (epoch ms) and the operator, if known.
 * @returns how many deliveries were re-enqueued.
 */
async function requeueWaiting(
  request: IRequest,
  env: Env,
  before: SubscriptionRecord,
  at: { readonly now: number; readonly operator: string | null },
): Promise<number> {
  const since = before.health.failingSince ?? before.health.disabledAt ?? at.now;
  const ids = await requeueSubscriptionDeliveries(env.DB, before.id, since, at.now);
  await enqueueRequestedDeliveries(env.DELIVERIES, ids, {
    trigger: 'recover',
    operator: at.operator,
    requestedAt: at.now,
  });
  logEvent('info', 'subscription_requeued', {
    request_id: contextOf(request).requestId,
    subscription_id: before.id,
    deliveries: ids.length,
  });
  return ids.length;
}

/** The view of one subscription with its recent success rate. */
async function viewWithRate(
  env: Env,
  record: SubscriptionRecord,
  now: number,
): Promise<SubscriptionView> {
  const attempts = await countRecentAttempts(env.DB, [record.id], now);
  return toSubscriptionView(record, now, attempts.get(record.id));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
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
