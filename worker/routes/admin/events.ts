/**
 * The admin API's event routes (`/admin/events`): one event with its deliveries and their
 * attempts, and replay; the list (filters, keyset pagination) is in ./event-list.ts.
 * The admin guard (`requireAdmin`, mounted on every admin route) has already checked `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { replayDeliveries } from '../../db/admin-deliveries.ts';
import { listEventDeliveries } from '../../db/deliveries.ts';
import { listDeliveryAttempts } from '../../db/delivery-attempts.ts';
import type { EventShard } from '../../db/event-shards.ts';
import {
  appendForcedReplayStatement,
  type ForcedReplay,
  listForcedReplays,
} from '../../db/forced-replays.ts';
import { subscriptionsViewFor } from '../../db/subscription-snapshot.ts';
import type { WebhookEventRecord } from '../../db/webhook-events.ts';
import { contextOf, settingsIn } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { findStoredEvent } from '../../relay/event-store.ts';
import { enqueueRequestedDeliveries } from '../../relay/operator-request.ts';
import { toDeliveryAttemptView, toDeliveryView } from './deliveries.ts';
import { amountOf } from './event-amount.ts';
import { toEventSummaryView } from './event-list.ts';
import { OperatorNameSchema, operatorOf } from './operator.ts';
import { checkReplayTargets } from './subscription-guard.ts';

/** Path of the event collection; one event is `${path}/:id`. */
export const ADMIN_EVENTS_PATH = '/admin/events';

/**
 * The optional `POST /admin/events/:id/replay` body, strict: `subscription_id` (one
 * subscription), `force` (`true` to replay an `unconfirmed` event) and `operator` (who is
 * replaying it, recorded on the attempts it causes and, when forced, on the event; 1 to
 * 100 printable ASCII characters).
 */
export const EventReplaySchema = v.strictObject({
  subscription_id: v.optional(v.pipe(v.string(), v.nonEmpty('Expected a non-empty string'))),
  force: v.optional(v.boolean()),
  operator: v.optional(OperatorNameSchema),
});

/**
 * `GET /admin/events/:id`: the event as the list shows it (outcome, amount and currency
 * included) with its parsed `body` and exact `raw_body`, its
 * `confirmation` against the payment service (`null` when never checked, else `{ reason,
 * checks, checked_at, next_check_at }`: the last check's finding, how many checks were
 * made, when the last one was and when the next is due, ISO 8601 or `null`), its forced
 * replays (`forced_replays`, oldest first, each `{ at, by, from }`; `forced_replay` is the
 * latest or `null`), its deliveries (oldest first) and each one's `attempt_log` (first
 * attempt first). All of it is read from the event shard holding the event.
 *
 * @throws {HttpError} 404 `not_found`.
 */
export async function getEvent(request: IRequest, env: Env): Promise<Response> {
  const { event, shard } = await foundEvent(request, env);
  const { db } = shard;
  const deliveries = await listEventDeliveries(db, event.eventId);
  const attempts = await Promise.all(deliveries.map((d) => listDeliveryAttempts(db, d.id)));
  const forcedReplays = (await listForcedReplays(db, event.eventId)).map(toForcedReplayView);
  const data = {
    ...toEventSummaryView(event),
    ...amountOf(event.rawBody),
    body: parseBody(event.rawBody),
    raw_body: event.rawBody,
    confirmation: toConfirmationView(event),
    forced_replay: forcedReplays.at(-1) ?? null,
    forced_replays: forcedReplays,
    deliveries: deliveries.map((delivery, index) => ({
      ...toDeliveryView(delivery),
      attempt_log: (attempts[index] ?? []).map(toDeliveryAttemptView),
    })),
  };
  return jsonResponse({ status: 'success', data });
}

/**
 * `POST /admin/events/:id/replay`, body optional: `{ "subscription_id"?: string }`.
 * Without it, every enabled subscription whose filter matches the event; with it, that
 * subscription alone (its filter is not applied: the admin chose it). Each gets a
 * `pending` delivery due now: a new row, or its existing row reset (UNIQUE
 * (event_id, subscription_id); attempts kept), then one message per delivery; the attempts
 * this causes are recorded with trigger `replay` and the operator (the Cloudflare Access
 * user, else the body's `operator`; worker/routes/admin/operator.ts). The deliveries are
 * written in the event shard holding the event, and their messages name it.
 *
 * An `unconfirmed` event (the payment service contradicted it, or never confirmed it) or
 * one still `awaiting_confirmation` is replayed only with `"force": true` (a replay would
 * deliver money the service has not confirmed); who forced it (the operator, else `admin`), from which address and when
 * is appended to the event's forced-replay history in the same transaction (never
 * overwritten), and shown by `GET /admin/events/:id` as `forced_replays`.
 *
 * @param body - the validated body; `undefined` for a bare POST (no Content-Type, no or a
 *   zero Content-Length), which means "all". Its row reads it first (415, 413, or 400
 *   `validation_failed` for a bad body).
 * A disabled subscription gets nothing (the consumer would skip its delivery without an
 * attempt): named in `subscription_id`, or the only ones matching, it answers 409
 * `subscription_disabled` with the reason; among enabled matches it is skipped and listed in
 * `skipped_subscriptions` (`{ subscription_id, reason }`).
 *
 * @returns 202 `{ status: 'success', data: { event_id, delivery_ids, skipped_subscriptions } }`.
 * @throws {HttpError} 409 `event_unconfirmed` for an `unconfirmed` or
 *   `awaiting_confirmation` event without `"force": true`; 404 `not_found` (event, or the
 *   named subscription); 409 `subscription_disabled`.
 */
export async function replayEvent(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: v.InferOutput<typeof EventReplaySchema> | undefined,
): Promise<Response> {
  const subscriptionId = body?.subscription_id ?? null;
  const operator = operatorOf(request, body?.operator);
  const { event, shard } = await foundEvent(request, env);
  const now = Date.now();
  let forced: ForcedReplay | undefined;
  if (event.status === 'unconfirmed' || event.status === 'awaiting_confirmation') {
    // The payment service has not confirmed this money event: delivering it could make a
    // subscriber ship goods or credit a wallet for money that never arrived.
    if (body?.force !== true) {
      const state = event.status === 'unconfirmed' ? 'was not' : 'is not yet';
      throw new HttpError(
        409,
        'event_unconfirmed',
        `Event ${JSON.stringify(event.eventId)} ${state} confirmed by the payment service; ` +
          'send {"force": true} to replay it anyway',
      );
    }
    forced = {
      at: now,
      by: operator ?? 'admin',
      from: request.headers.get('CF-Connecting-IP') ?? 'unknown',
    };
  }
  // A disabled subscription's delivery would be skipped without an attempt: refused when
  // it is the only target, else skipped and named in the answer.
  // Subscriptions live in DB: another shard's statements read one snapshot of them.
  const view = await subscriptionsViewFor(env.DB, shard);
  const skipped = await checkReplayTargets(shard.db, event, subscriptionId, view);
  const before =
    forced === undefined ? [] : [appendForcedReplayStatement(shard.db, event.eventId, forced)];
  const targets = await replayDeliveries(shard, view, event, subscriptionId, now, before);
  const ids = targets.map((target) => target.deliveryId);
  await enqueueRequestedDeliveries(env.DELIVERIES, targets, {
    trigger: 'replay',
    operator,
    requestedAt: now,
  });
  logEvent(forced === undefined ? 'info' : 'warn', 'event_replayed', {
    request_id: contextOf(request).requestId,
    event_id: event.eventId,
    deliveries: ids.length,
    operator,
    ...(forced === undefined
      ? {}
      : { forced: true, forced_by: forced.by, forced_from: forced.from }),
  });
  return jsonResponse(
    {
      status: 'success',
      data: { event_id: event.eventId, delivery_ids: ids, skipped_subscriptions: skipped },
    },
    { status: 202 },
  );
}

function toForcedReplayView(forced: ForcedReplay) {
  return { at: new Date(forced.at).toISOString(), by: forced.by, from: forced.from };
}

function toConfirmationView({ confirmation }: WebhookEventRecord) {
  if (confirmation === undefined) return null;
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    reason: confirmation.reason,
    checks: confirmation.checks,
    checked_at: iso(confirmation.checkedAt),
    next_check_at: iso(confirmation.nextCheckAt),
  };
}

/**
 * The event of the path and the shard holding it: every shard that may hold its id is read
 * at once, and the first in placement order that has it answers.
 */
async function foundEvent(
  request: IRequest,
  env: Env,
): Promise<{ event: WebhookEventRecord; shard: EventShard }> {
  const id = request.params.id ?? '';
  const settings = settingsIn(contextOf(request));
  const found = await findStoredEvent(env, settings, id, Date.now());
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (found === undefined) throw new HttpError(404, 'not_found', `No event ${JSON.stringify(id)}`);
  return { event: found.record, shard: found.shard };
}

function parseBody(rawBody: string): unknown {
  try {
    return JSON.parse(rawBody);
  } catch {
    // The ingress stores validated JSON only; a row that is not stays readable as raw_body.
    return null;
  }
}
