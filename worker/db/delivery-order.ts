/**
 * D1 query of ordered delivery (subscriptions with `ordered`): whether a delivery must wait
 * for an earlier event of the same reference. "Earlier" is the provider's `timestamp` in the
 * stored body (ISO 8601, compared as a Julian day; copied into a column for a compressed body),
 * then the receive time and event id for events with the same timestamp. Statements bind with
 * `?N`; `db` is the database storing the delivery (`DB`, or an event shard).
 */
import { type EventShard, MAIN_SHARD } from './event-shards.ts';
import { cachedSubscriptions } from './subscription-cache.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
  viewOn,
} from './subscription-snapshot.ts';
import { bodyTimestampDaySql } from './webhook-events.ts';

/** Where a delivery stands in its reference's order. */
export interface DeliveryOrder {
  /** The event's `data.reference`; `null` when it has none (nothing to order by). */
  readonly reference: string | null;
  /**
   * Whether an earlier event of the reference may still reach the same subscription: its
   * delivery to it is `pending`, or it awaits confirmation and its type matches it.
   */
  readonly blocked: boolean;
}

/**
 * Reads whether delivery `deliveryId` must wait for an earlier event of its reference stored
 * in the same database. Events without a reference, or whose timestamp is not a date, never
 * wait.
 *
 * @param deliveryId - `dlv_<uuid>`.
 * @param view - how `db` reads the subscriptions (worker/db/subscription-snapshot.ts); by
 *   default the table (`db` is `DB`).
 * @returns the order, or `undefined` when the delivery or its event is gone.
 * @internal Exported for the tests; the outbox asks {@link findDeliveryOrderAcrossShards}.
 */
export async function findDeliveryOrder(
  db: D1Database,
  deliveryId: string,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<DeliveryOrder | undefined> {
  const row = await readOrder(db, deliveryId, view);
  return row === undefined ? undefined : { reference: row.reference, blocked: row.blocked === 1 };
}

/**
 * {@link findDeliveryOrder} when events are spread over shards (worker/db/event-shards.ts):
 * an earlier event of the reference may be stored in any of them, so each other shard is
 * asked too (in parallel, only when the delivery's own shard does not block it already).
 *
 * @param env - `DB`, where the subscriptions live, read through this isolate's copy
 *   (worker/db/subscription-cache.ts).
 * @param shards - every event shard (`everyEventShard`).
 * @param home - the shard storing the delivery.
 * @param deliveryId - `dlv_<uuid>`.
 * @returns the order, or `undefined` when the delivery or its event is gone.
 * @throws whatever D1 throws.
 */
export async function findDeliveryOrderAcrossShards(
  env: Env,
  shards: readonly EventShard[],
  home: EventShard,
  deliveryId: string,
): Promise<DeliveryOrder | undefined> {
  const others = shards.filter((shard) => shard.name !== home.name);
  const snapshot =
    others.length === 0 && home.name === MAIN_SHARD
      ? SUBSCRIPTIONS_TABLE
      : (await cachedSubscriptions(env)).snapshot;
  const row = await readOrder(home.db, deliveryId, viewOn(home, snapshot));
  if (row === undefined) return undefined;
  if (row.blocked === 1 || row.reference === null || others.length === 0) {
    return { reference: row.reference, blocked: row.blocked === 1 };
  }
  const blocked = await Promise.all(
    others.map(async (shard) => {
      const view = viewOn(shard, snapshot);
      const found = await shard.db
        .prepare(
          `${subscriptionsCte(view, 6)}SELECT 1 AS found FROM webhook_events AS e2
           WHERE e2.reference = ?1 AND e2.event_id != ?4
             AND (${bodyTimestampDaySql('e2')}, e2.received_at, e2.event_id) < (?2, ?3, ?4)
             AND ${waitsFor('?5')}
           LIMIT 1`,
        )
        .bind(
          row.reference,
          row.day,
          row.received_at,
          row.event_id,
          row.subscription_id,
          ...snapshotBinds(view),
        )
        .first();
      return found !== null;
    }),
  );
  return { reference: row.reference, blocked: blocked.includes(true) };
}

// An earlier event e2 holds back a delivery to `subscription` (SQL naming its id): its
// delivery to the same subscription is pending, or it awaits confirmation and its type
// matches the subscription.
function waitsFor(subscription: string): string {
  return `(EXISTS (SELECT 1 FROM deliveries AS d2 WHERE d2.event_id = e2.event_id
                  AND d2.subscription_id = ${subscription} AND d2.status = 'pending')
             OR (e2.status = 'awaiting_confirmation' AND EXISTS (
                  SELECT 1 FROM subscriptions AS s WHERE s.id = ${subscription}
                    AND (s.event_types IS NULL OR EXISTS (
                      SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = e2.event_type)))))`;
}

interface OrderRow {
  reference: string | null;
  blocked: number;
  subscription_id: string;
  day: number | null;
  received_at: number;
  event_id: string;
}

// The delivery's reference, its place in the order, and whether its own database blocks it.
async function readOrder(
  db: D1Database,
  deliveryId: string,
  view: SubscriptionsView,
): Promise<OrderRow | undefined> {
  const row = await db
    .prepare(
      `${subscriptionsCte(view, 2)}SELECT e.reference AS reference, EXISTS (
         SELECT 1 FROM webhook_events AS e2
         WHERE e.reference IS NOT NULL AND e2.reference = e.reference
           AND e2.event_id != e.event_id
           AND (${bodyTimestampDaySql('e2')}, e2.received_at, e2.event_id)
             < (${bodyTimestampDaySql('e')}, e.received_at, e.event_id)
           AND ${waitsFor('d.subscription_id')}
       ) AS blocked, d.subscription_id AS subscription_id, ${bodyTimestampDaySql('e')} AS day,
       e.received_at AS received_at, e.event_id AS event_id
       FROM deliveries AS d JOIN webhook_events AS e ON e.event_id = d.event_id
       WHERE d.id = ?1`,
    )
    .bind(deliveryId, ...snapshotBinds(view))
    .first<OrderRow>();
  return row ?? undefined;
}
