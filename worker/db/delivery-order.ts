/**
 * D1 query of ordered delivery (subscriptions with `ordered`): whether a delivery must wait
 * for an earlier event of the same reference. "Earlier" is the provider's `timestamp` in the
 * stored body (ISO 8601, compared as a Julian day; copied into a column for a compressed body),
 * then the receive time and event id for events with the same timestamp. Statements bind with
 * `?N`; `db` is always the D1 binding.
 */
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
 * Reads whether delivery `deliveryId` must wait for an earlier event of its reference.
 * Events without a reference, or whose timestamp is not a date, never wait.
 *
 * @param deliveryId - `dlv_<uuid>`.
 * @returns the order, or `undefined` when the delivery or its event is gone.
 */
export async function findDeliveryOrder(
  db: D1Database,
  deliveryId: string,
): Promise<DeliveryOrder | undefined> {
  const row = await db
    .prepare(
      `SELECT e.reference AS reference, EXISTS (
         SELECT 1 FROM webhook_events AS e2
         WHERE e.reference IS NOT NULL AND e2.reference = e.reference
           AND e2.event_id != e.event_id
           AND (${bodyTimestampDaySql('e2')}, e2.received_at, e2.event_id)
             < (${bodyTimestampDaySql('e')}, e.received_at, e.event_id)
           AND (EXISTS (SELECT 1 FROM deliveries AS d2 WHERE d2.event_id = e2.event_id
                  AND d2.subscription_id = d.subscription_id AND d2.status = 'pending')
             OR (e2.status = 'awaiting_confirmation' AND EXISTS (
                  SELECT 1 FROM subscriptions AS s WHERE s.id = d.subscription_id
                    AND (s.event_types IS NULL OR EXISTS (
                      SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = e2.event_type)))))
       ) AS blocked
       FROM deliveries AS d JOIN webhook_events AS e ON e.event_id = d.event_id
       WHERE d.id = ?1`,
    )
    .bind(deliveryId)
    .first<{ reference: string | null; blocked: number }>();
  return row === null ? undefined : { reference: row.reference, blocked: row.blocked === 1 };
}
