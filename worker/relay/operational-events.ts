/**
 * The relay's own events (`subscription.disabled`, `delivery.dead_lettered`,
 * `event.unconfirmed`, `relay.backlog`): stored in `webhook_events` and delivered like the
 * payment service's, signed and retried, to the subscriptions that list the type. They are
 * not money events: nothing confirms them upstream.
 */
import * as v from 'valibot';
import { bytesToHex } from '../../lib/shared.ts';
import { settingsOf } from '../config.ts';
import {
  type DeliveryTargetRow,
  fanOutOperationalDeliveriesStatement,
  fanOutToSubscriptionStatement,
  toDeliveryTargets,
} from '../db/deliveries.ts';
import { placeEvent } from '../db/event-shards.ts';
import { cachedSubscriptionsView } from '../db/subscription-cache.ts';
import { insertWebhookEventStatement, type NewWebhookEvent } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { enqueueDeliveries } from './enqueue.ts';
import { MAX_EVENT_KEY_LENGTH } from './envelope.ts';
import {
  OPERATIONAL_DATA_SCHEMAS,
  type OperationalEventData,
  type OperationalEventType,
} from './operational-event-schemas.ts';

/** The `message` of each operational event's envelope. */
const MESSAGES: Readonly<Record<OperationalEventType, string>> = {
  'subscription.disabled': 'Subscription disabled',
  'delivery.dead_lettered': 'Delivery dead-lettered',
  'event.unconfirmed': 'Money event unconfirmed',
  'relay.backlog': 'Relay backlog',
  'subscription.test': 'Test event',
};

/**
 * One `relay.backlog` per this window while the backlog lasts, in milliseconds (1 hour):
 * often enough to keep an operator aware, rarely enough not to bury the real events.
 */
const BACKLOG_ALERT_WINDOW_MS = 3_600_000;

/** What to emit. */
export interface OperationalEvent<T extends OperationalEventType> {
  readonly type: T;
  readonly data: OperationalEventData<T>;
  /**
   * The subscription the event is about, never sent it. @default `data.subscription_id`
   * when the data has one.
   */
  readonly subjectSubscriptionId?: string;
  /**
   * Delivers the event to this one enabled subscription only, whatever its `event_types`
   * (an operator's test event), instead of fanning it out by type.
   */
  readonly recipientSubscriptionId?: string;
  /** When it happened, epoch milliseconds (the envelope's `timestamp`). @default Date.now() */
  readonly now?: number;
}

/** What {@link emitOperationalEvent} did. */
export interface EmittedEvent {
  readonly eventId: string;
  /** `false` when an event of this id was stored already (nothing was written or sent). */
  readonly stored: boolean;
  readonly deliveryIds: readonly string[];
}

/**
 * Stores one operational event in the shard its id is placed in (worker/db/event-shards.ts)
 * and fans it out there: one `pending` delivery per enabled
 * subscription whose `event_types` lists the type (a subscription to every type, `null`, does
 * not get the relay's own events), never to the subscription it is about; then enqueues them.
 * The event id is derived from what the event is about, so an emitter that runs twice (a
 * retried message, two cron runs in the same window) stores and delivers it once:
 * `subscription.disabled:<subscription>:<disabled_at>`, `delivery.dead_lettered:<delivery>:<attempts>`,
 * `event.unconfirmed:<event>`, `relay.backlog:<start of its hour window>` (hashed when longer
 * than 255 characters); a `subscription.test` is new each time (`…:<subscription>:<uuid>`)
 * and goes to `recipientSubscriptionId` alone. The subscriptions are those of `DB` (a
 * snapshot on another shard), and the deliveries' messages name the shard.
 *
 * @param env - `DB`, the event shards, `DELIVERIES`, and the settings (`D1_SHARDS`).
 * @param event - the type, its data (checked against the type's schema), the subject, the time.
 * @returns the event id, whether it was new, and the deliveries written.
 * @throws {v.ValiError} when `data` does not fit the type's schema (a bug of the caller).
 * @throws {HttpError} 503 `configuration_error` when the settings are invalid or `D1_SHARDS`
 *   names a missing binding (which database holds the event is a setting).
 * @throws whatever D1 throws (nothing written then); an enqueue failure is logged, not
 *   thrown: the deliveries are stored `pending` and the cron sweeper sends them.
 *
 * @example
 * ```ts
 * await emitOperationalEvent(env, {
 *   type: 'subscription.disabled',
 *   data: { subscription_id: id, host, reason: 'answered 410 Gone', disabled_at: new Date(now).toISOString() },
 * });
 * ```
 */
export async function emitOperationalEvent<T extends OperationalEventType>(
  env: Env,
  event: OperationalEvent<T>,
): Promise<EmittedEvent> {
  const data = v.parse(OPERATIONAL_DATA_SCHEMAS[event.type], event.data) as Record<string, unknown>;
  const now = event.now ?? Date.now();
  const eventId = await operationalEventId(event.type, data, now);
  const subject =
    event.subjectSubscriptionId ??
    (typeof data.subscription_id === 'string' ? data.subscription_id : null);
  const envelope = {
    event_type: event.type,
    event_id: eventId,
    timestamp: new Date(now).toISOString(),
    message: MESSAGES[event.type],
    data,
  };
  const stored: NewWebhookEvent = {
    eventId,
    eventType: event.type,
    receivedAt: now,
    reference: null,
    rawBody: JSON.stringify(envelope),
  };
  // Stored at home only, never looked for elsewhere: a repeat of the same id (a retried
  // message, a second cron run in the window) comes soon after the first, so under the same
  // generation and to the same shard; only a repeat across a change of shards could be stored
  // twice, which for an alert costs one more delivery, not a lost or doubled payment.
  const { home } = await placeEvent(env, settingsOf(env), eventId, now);
  const view = await cachedSubscriptionsView(env, home);
  const [inserted, fanOut] = await home.db.batch<DeliveryTargetRow>([
    await insertWebhookEventStatement(home.db, stored),
    event.recipientSubscriptionId === undefined
      ? fanOutOperationalDeliveriesStatement(home.db, stored, subject, view)
      : fanOutToSubscriptionStatement(home.db, stored, event.recipientSubscriptionId, view),
  ]);
  const isNew = inserted?.meta.changes === 1;
  const targets = isNew ? toDeliveryTargets(fanOut?.results, home.name) : [];
  const deliveryIds = targets.map((target) => target.deliveryId);
  logEvent('info', 'operational_event_emitted', {
    event_id: eventId,
    event_type: event.type,
    duplicate: !isNew,
    deliveries: deliveryIds.length,
  });
  await enqueueDeliveries(env.DELIVERIES, targets, eventId);
  return { eventId, stored: isNew, deliveryIds };
}

/** What makes each type's event one of a kind (see {@link emitOperationalEvent}). */
function keyOf(type: OperationalEventType, data: Record<string, unknown>, now: number): string {
  switch (type) {
    case 'subscription.disabled':
      return `${data.subscription_id}:${data.disabled_at}`;
    case 'delivery.dead_lettered':
      return `${data.delivery_id}:${data.attempts}`;
    case 'event.unconfirmed':
      return String(data.event_id);
    case 'relay.backlog':
      return new Date(now - (now % BACKLOG_ALERT_WINDOW_MS)).toISOString();
    case 'subscription.test':
      // Every test an operator sends is a new event, two in the same millisecond included.
      return `${data.subscription_id}:${crypto.randomUUID()}`;
  }
}

/**
 * `<type>:<key>`, or `<type>:sha256:<hex>` when that would exceed the 255 characters of an
 * event id (a provider's ids may be that long already). Ids stay visible ASCII: the keys are
 * made of ids and ISO times, which are.
 */
async function operationalEventId(
  type: OperationalEventType,
  data: Record<string, unknown>,
  now: number,
): Promise<string> {
  const id = `${type}:${keyOf(type, data, now)}`;
  if (id.length <= MAX_EVENT_KEY_LENGTH && /^[\x21-\x7e]+$/.test(id)) return id;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(id));
  return `${type}:sha256:${bytesToHex(new Uint8Array(digest))}`;
}
