/**
 * Deferred confirmation of money events: a check's outcome written on its event (fenced by
 * the check count, with the fan-out in the same D1 batch the moment it is confirmed), the
 * next check scheduled as a delayed `DELIVERIES` message, and the re-check a message runs.
 * The schedule is in worker/relay/confirmation-schedule.ts; the cron sweeper re-sends checks
 * whose message was lost (worker/relay/sweeper.ts).
 */
import { loadSettings } from '../config.ts';
import {
  type DeliveryTargetRow,
  fanOutConfirmedDeliveriesStatement,
  toDeliveryTargets,
} from '../db/deliveries.ts';
import { type CheckOutcome, settleCheckStatement } from '../db/event-confirmation.ts';
import { type EventShard, eventShardNamed, MAIN_SHARD } from '../db/event-shards.ts';
import { cachedSubscriptionsView } from '../db/subscription-cache.ts';
import { findWebhookEvent, type WebhookEventRecord } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { type ConfirmationDecision, decideConfirmation } from './confirm.ts';
import { nextConfirmationCheck } from './confirmation-schedule.ts';
import { enqueueDeliveries } from './enqueue.ts';
import { announceUnconfirmed } from './operational-alerts.ts';

/**
 * A `DELIVERIES` message asking for a re-check: `kind` tells it from a delivery's
 * `{ deliveryId }`. `check` is the number of checks already made when it was sent; a
 * message whose count no longer matches the event's is stale and dropped.
 */
export interface ConfirmationMessage {
  readonly kind: 'confirm';
  readonly eventId: string;
  readonly check: number;
  /**
   * The binding name of the event shard the event is stored in (worker/db/event-shards.ts);
   * absent: `DB` (one shard, or a message queued before messages named their shard).
   */
  readonly shard?: string;
}

/** What a {@link ConfirmationMessage} says: its event, the checks made, and its shard. */
export interface CheckRequest {
  readonly eventId: string;
  /** Checks made so far. */
  readonly check: number;
  /** The event's shard; absent or `DB`: left out of the message. */
  readonly shard?: string;
}

/**
 * The re-check message of an event: `shard` only when it is not `DB`, so a message with one
 * shard is the same as before shards.
 *
 * @param request - the event, the checks made so far and its shard.
 */
export function confirmationMessage({ eventId, check, shard }: CheckRequest): ConfirmationMessage {
  return shard === undefined || shard === MAIN_SHARD
    ? { kind: 'confirm', eventId, check }
    : { kind: 'confirm', eventId, check, shard };
}

/**
 * Whether a message body is a {@link ConfirmationMessage}.
 *
 * @param body - the message body as received.
 */
export function isConfirmationMessage(body: unknown): body is ConfirmationMessage {
  if (typeof body !== 'object' || body === null) return false;
  const { kind, eventId, check, shard } = body as Partial<Record<string, unknown>>;
  return (
    kind === 'confirm' &&
    typeof eventId === 'string' &&
    Number.isSafeInteger(check) &&
    (shard === undefined || typeof shard === 'string')
  );
}

/** A check's outcome as written, with the queue delay of the next check when there is one. */
export interface ScheduledOutcome extends CheckOutcome {
  /** `delaySeconds` of the next check's message; `undefined`: no message (none, or the sweeper's). */
  readonly delaySeconds: number | undefined;
}

/**
 * Turns what check number `checksDone` found into what is stored: `awaiting_confirmation`
 * with the next check's time while the schedule lasts; past its end, `unconfirmed` with the
 * count and the last reason (`not confirmed after 8 checks: status processing`).
 *
 * @param decision - what the check found.
 * @param checksDone - checks made, this one included (1 at ingress).
 * @param now - when it was made, epoch ms.
 */
export function scheduleOutcome(
  decision: ConfirmationDecision,
  checksDone: number,
  now: number,
): ScheduledOutcome {
  const reason = decision.reason ?? 'not checked (confirmation is off)';
  if (decision.status !== 'awaiting_confirmation') {
    return {
      status: decision.status,
      reason,
      checkedAt: now,
      nextCheckAt: null,
      delaySeconds: undefined,
    };
  }
  const next = nextConfirmationCheck(checksDone, now);
  if (next === undefined) {
    return {
      status: 'unconfirmed',
      reason: `not confirmed after ${checksDone} checks: ${reason}`,
      checkedAt: now,
      nextCheckAt: null,
      delaySeconds: undefined,
    };
  }
  return {
    status: decision.status,
    reason,
    checkedAt: now,
    nextCheckAt: next.at,
    delaySeconds: next.delaySeconds,
  };
}

/**
 * Sends the message of the next check, delayed. A failure is logged, not thrown: the
 * event's `next_check_at` is stored, so the cron sweeper starts the check once overdue.
 *
 * @param queue - the `DELIVERIES` binding.
 * @param message - the event, the checks made so far, and the binding name of the shard the
 *   event is stored in (`shard`, absent or `DB` for `DB`).
 * @param delaySeconds - the queue delay, whole seconds up to 12 h.
 *
 * @example
 * ```ts
 * await enqueueCheck(env.DELIVERIES, { eventId, check: 1, shard: home.name }, 10);
 * ```
 */
export async function enqueueCheck(
  queue: Queue,
  message: CheckRequest,
  delaySeconds: number,
): Promise<void> {
  try {
    // One message, sent as a batch of one so its delay travels on the message itself.
    const body = confirmationMessage(message);
    await queue.sendBatch([{ body, delaySeconds }]);
  } catch (error) {
    logEvent('error', 'confirmation_enqueue_failed', {
      event_id: message.eventId,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}

/** What {@link applyCheck} did. */
export interface AppliedCheck {
  /** `false` when another check of the same step got there first (nothing written). */
  readonly applied: boolean;
  readonly outcome: ScheduledOutcome;
  /** The deliveries created by this check (only when it confirmed the event). */
  readonly deliveryIds: readonly string[];
}

/**
 * Writes a re-check's finding on an `awaiting_confirmation` event, in the shard that holds
 * it, fenced by `checksBefore`. When it is confirmed (or confirmation was turned off), its
 * deliveries are written in the same batch (to the subscriptions of `DB`, read as a snapshot
 * on another shard) and enqueued naming the shard; while it stays awaiting, the next check's
 * message is sent with the schedule's delay. When it becomes `unconfirmed`,
 * `event.unconfirmed` is raised (a failure to raise it is logged).
 *
 * @param env - `DB`, the event shards, `DELIVERIES`.
 * @param event - the event's id, type and reference.
 * @param checksBefore - its check count as read before the lookup.
 * @param decision - what the lookup found.
 * @param now - when, epoch ms.
 * @param shard - the shard the event is stored in (worker/db/event-shards.ts); by default `DB`.
 * @throws whatever D1 throws (nothing was written then).
 */
export async function applyCheck(
  env: Env,
  event: Pick<WebhookEventRecord, 'eventId' | 'eventType' | 'reference'>,
  checksBefore: number,
  decision: ConfirmationDecision,
  now: number,
  shard: EventShard = eventShardNamed(env, MAIN_SHARD),
): Promise<AppliedCheck> {
  const outcome = scheduleOutcome(decision, checksBefore + 1, now);
  const settle = settleCheckStatement(shard.db, event.eventId, checksBefore, outcome);
  const delivered = outcome.status === 'confirmed' || outcome.status === 'received';
  const fanOut = delivered
    ? fanOutConfirmedDeliveriesStatement(
        shard.db,
        event,
        checksBefore,
        now,
        await cachedSubscriptionsView(env, shard),
      )
    : undefined;
  const results = await shard.db.batch<DeliveryTargetRow>(
    fanOut === undefined ? [settle] : [fanOut, settle],
  );
  const applied = results.at(-1)?.results.length === 1;
  const targets = applied && delivered ? toDeliveryTargets(results[0]?.results, shard.name) : [];
  const deliveryIds = targets.map((target) => target.deliveryId);
  if (applied) {
    logEvent(outcome.status === 'unconfirmed' ? 'warn' : 'info', 'confirmation_checked', {
      event_id: event.eventId,
      check: checksBefore + 1,
      status: outcome.status,
      reason: outcome.reason,
      next_check_at:
        outcome.nextCheckAt === null ? null : new Date(outcome.nextCheckAt).toISOString(),
      deliveries: deliveryIds.length,
    });
    if (outcome.delaySeconds !== undefined) {
      await enqueueCheck(
        env.DELIVERIES,
        { eventId: event.eventId, check: checksBefore + 1, shard: shard.name },
        outcome.delaySeconds,
      );
    }
    await enqueueDeliveries(env.DELIVERIES, targets, `check-${event.eventId}`);
    if (outcome.status === 'unconfirmed') {
      const checks = checksBefore + 1;
      await announceUnconfirmed(env, { ...event, reason: outcome.reason, checks }, now);
    }
  }
  return { applied, outcome, deliveryIds };
}

/**
 * Re-checks an event for a {@link ConfirmationMessage}, in the shard the message names
 * (none: `DB`): nothing when the event is gone,
 * no longer awaiting, or has moved past the message's check (a stale copy); otherwise one
 * lookup upstream and {@link applyCheck}.
 *
 * @param env - bindings and settings.
 * @param message - the event and the check count the message was sent for.
 * @param now - when, epoch ms.
 * @returns what was applied, or `undefined` for a stale message.
 */
async function recheckEvent(
  env: Env,
  message: ConfirmationMessage,
  now: number,
): Promise<AppliedCheck | undefined> {
  const shard = eventShardNamed(env, message.shard);
  const event = await findWebhookEvent(shard.db, message.eventId);
  const checks = event?.confirmation?.checks ?? 0;
  if (event === undefined || event.status !== 'awaiting_confirmation' || checks !== message.check) {
    logEvent('info', 'confirmation_check_skipped', {
      event_id: message.eventId,
      check: message.check,
      status: event?.status ?? 'not_found',
    });
    return undefined;
  }
  const envelope = parseEnvelope(event.rawBody);
  const decision: ConfirmationDecision =
    envelope === undefined
      ? { status: 'unconfirmed', reason: 'the stored body is not a JSON envelope' }
      : await decideConfirmation(env, envelope, recheckRequestId(event.eventId, checks + 1));
  return applyCheck(env, event, checks, decision, now, shard);
}

/**
 * Runs one re-check message of the `DELIVERIES` queue (worker/relay/consumer.ts): with
 * invalid settings it is acked and the check stays due (the cron sweeper sends it again
 * once overdue); otherwise {@link recheckEvent}, then ack.
 *
 * @param message - the queue message.
 * @param body - its body.
 * @param env - bindings and settings.
 * @throws whatever D1 throws: the consumer retries the message on its schedule.
 */
export async function consumeConfirmationMessage(
  message: Message<unknown>,
  body: ConfirmationMessage,
  env: Env,
): Promise<void> {
  if (!loadSettings(env).ok) {
    logEvent('info', 'confirmation_check_skipped', {
      event_id: body.eventId,
      check: body.check,
      status: 'configuration_error',
    });
    message.ack();
    return;
  }
  await recheckEvent(env, body, Date.now());
  message.ack();
}

/**
 * The `X-Request-Id` of re-check `n` of an event: `recheck-<n>-<event id>` (so the
 * upstream's log tells which check asked), or a fresh UUID when that would be too long.
 */
function recheckRequestId(eventId: string, n: number): string {
  const id = `recheck-${n}-${eventId}`;
  return id.length <= 128 ? id : crypto.randomUUID();
}

// The ingress stores validated envelopes only; a row that is not names no record.
function parseEnvelope(rawBody: string): { event_type: string; data: unknown } | undefined {
  try {
    const parsed: unknown = JSON.parse(rawBody);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { event_type: type, data } = parsed as Record<string, unknown>;
    return typeof type === 'string' ? { event_type: type, data } : undefined;
  } catch {
    return undefined;
  }
}
