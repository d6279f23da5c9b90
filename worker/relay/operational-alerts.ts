/**
 * Where the relay raises its own events: a delivery dead-lettered, a money event that ends
 * `unconfirmed`, a backlog of due deliveries (`subscription.disabled` is raised where a
 * subscription is disabled). Each builds the event's data from D1 and hands it to
 * `emitOperationalEvent` (worker/relay/operational-events.ts).
 */

import { loadSettings } from '../config.ts';
import { findDelivery } from '../db/deliveries.ts';
import { findOldestDueDelivery, type OldestDueDelivery } from '../db/delivery-backlog.ts';
import {
  type EventShard,
  eventShardNamed,
  everyEventShard,
  MAIN_SHARD,
} from '../db/event-shards.ts';
import { findWebhookEvent } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { OPERATIONAL_DATA_SCHEMAS } from './operational-event-schemas.ts';
import { type EmittedEvent, emitOperationalEvent } from './operational-events.ts';

const isOperationalType = (type: string): boolean => Object.hasOwn(OPERATIONAL_DATA_SCHEMAS, type);

/**
 * Raises `delivery.dead_lettered` for a delivery whose attempts ran out, before it is
 * marked `failed`: a failure here leaves it `pending`, so the dead-letter message is retried
 * and raises it then (its id, `<delivery>:<attempts>`, keeps a retry from doubling it). Nothing
 * is raised for a delivery already settled or gone, nor for a delivery OF an operational event
 * (an alert about an alert could feed on itself when the subscriber that lists them is down).
 *
 * @param env - `DB`, `DELIVERIES`.
 * @param shard - the event shard storing the delivery.
 * @param deliveryId - the delivery being dead-lettered.
 * @param now - epoch ms.
 * @returns the event raised, or `undefined` when none was.
 * @throws whatever D1 throws.
 */
export async function announceDeadLetter(
  env: Env,
  shard: EventShard,
  deliveryId: string,
  now: number,
): Promise<EmittedEvent | undefined> {
  const delivery = await findDelivery(shard.db, deliveryId);
  if (delivery?.status !== 'pending') return undefined;
  const event = await findWebhookEvent(shard.db, delivery.eventId);
  if (event === undefined || isOperationalType(event.eventType)) return undefined;
  return emitOperationalEvent(env, {
    type: 'delivery.dead_lettered',
    now,
    data: {
      delivery_id: delivery.id,
      event_id: delivery.eventId,
      event_type: event.eventType,
      subscription_id: delivery.subscriptionId,
      attempts: delivery.attempts,
      last_status: delivery.lastStatus,
      dead_lettered_at: new Date(now).toISOString(),
    },
  });
}

/** A money event that has just become `unconfirmed`, and why. */
interface UnconfirmedEvent {
  readonly eventId: string;
  readonly eventType: string;
  readonly reference: string | null;
  readonly reason: string;
  /** Checks made, the last one included. */
  readonly checks: number;
}

/**
 * Raises `event.unconfirmed` for a money event whose status has just been written
 * `unconfirmed` (at ingress or by a re-check). That write is already done, so a failure is
 * logged, not thrown: throwing would not bring the alert back (a retried check finds the
 * event settled), and at ingress it would cost the provider's 200.
 *
 * @param env - `DB`, `DELIVERIES`.
 * @param event - the event and the finding that made it unconfirmed.
 * @param now - epoch ms.
 */
export async function announceUnconfirmed(
  env: Env,
  event: UnconfirmedEvent,
  now: number,
): Promise<void> {
  try {
    await emitOperationalEvent(env, {
      type: 'event.unconfirmed',
      now,
      data: {
        event_id: event.eventId,
        event_type: event.eventType,
        reference: event.reference,
        reason: event.reason,
        checks: event.checks,
        unconfirmed_at: new Date(now).toISOString(),
      },
    });
  } catch (error) {
    logEvent('error', 'operational_event_failed', {
      event_type: 'event.unconfirmed',
      event_id: event.eventId,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * Raises `relay.backlog` when the oldest due `pending` delivery has waited at least
 * `thresholdSec`: since its creation when it was never attempted, since its next attempt
 * was due otherwise. One event per hour window (the id carries the window), however many
 * cron runs see the backlog. The oldest is the oldest of every event shard (one query each),
 * and the due count their sum.
 *
 * @param env - `DB`, `DELIVERIES`, the event shards `D1_SHARDS` names.
 * @param now - the sweep time, epoch ms.
 * @param thresholdSec - `RELAY_BACKLOG_ALERT_SEC`, seconds; 0 turns the alert off.
 * @returns the event raised, or `undefined` when there is no backlog (or the alert is off).
 * @throws whatever D1 throws.
 */
export async function announceBacklog(
  env: Env,
  now: number,
  thresholdSec: number,
): Promise<EmittedEvent | undefined> {
  if (thresholdSec === 0) return undefined;
  const oldest = await oldestDueOfEveryShard(env, now);
  if (oldest === undefined) return undefined;
  const ageSeconds = Math.floor((now - oldest.dueAt) / 1000);
  if (ageSeconds < thresholdSec) return undefined;
  return emitOperationalEvent(env, {
    type: 'relay.backlog',
    now,
    data: {
      oldest_delivery_id: oldest.id,
      oldest_event_id: oldest.eventId,
      oldest_subscription_id: oldest.subscriptionId,
      oldest_due_at: new Date(oldest.dueAt).toISOString(),
      age_seconds: ageSeconds,
      threshold_seconds: thresholdSec,
      due_deliveries: oldest.dueCount,
    },
  });
}

// The oldest due delivery over every event shard, with the due count summed; `DB` alone
// when the settings cannot be read (the cron skips the sweep then anyway).
async function oldestDueOfEveryShard(
  env: Env,
  now: number,
): Promise<OldestDueDelivery | undefined> {
  const loaded = loadSettings(env);
  const shards = loaded.ok
    ? everyEventShard(env, loaded.settings)
    : [eventShardNamed(env, MAIN_SHARD)];
  const found = await Promise.all(shards.map((shard) => findOldestDueDelivery(shard.db, now)));
  let oldest: OldestDueDelivery | undefined;
  let dueCount = 0;
  for (const candidate of found) {
    if (candidate === undefined) continue;
    dueCount += candidate.dueCount;
    const older =
      oldest === undefined ||
      candidate.dueAt < oldest.dueAt ||
      (candidate.dueAt === oldest.dueAt && candidate.id < oldest.id);
    if (older) oldest = candidate;
  }
  return oldest === undefined ? undefined : { ...oldest, dueCount };
}
