/**
 * D1 reads of the subscriptions a retry or replay would deliver to, enabled or not, with the
 * reason and time of a disable (migrations/0010), so the admin API can refuse to accept work
 * the queue consumer would skip. Every time is epoch milliseconds; statements bind with
 * `?N`; `db` is always the D1 binding.
 */

/** A subscription as a retry or replay checks it. */
export interface ReplayTarget {
  readonly id: string;
  readonly enabled: boolean;
  /** Why its health last changed (the disable's reason while disabled). */
  readonly reason: string | null;
  /** When it was disabled, epoch ms; `null` while enabled. */
  readonly disabledAt: number | null;
}

interface ReplayTargetRow {
  id: string;
  enabled: number;
  health_reason: string | null;
  disabled_at: number | null;
}

function toReplayTarget(row: ReplayTargetRow): ReplayTarget {
  return {
    id: row.id,
    enabled: row.enabled === 1,
    reason: row.health_reason,
    disabledAt: row.disabled_at,
  };
}

/**
 * The subscription of a delivery, for a retry.
 *
 * @param deliveryId - the delivery.
 * @returns `undefined` when there is no such delivery; its `subscription` is `null` when
 *   the subscription was deleted (deliveries keep their history without it).
 */
export async function findDeliveryTarget(
  db: D1Database,
  deliveryId: string,
): Promise<{ subscriptionId: string; subscription: ReplayTarget | null } | undefined> {
  const row = await db
    .prepare(
      `SELECT d.subscription_id, s.id, s.enabled, s.health_reason, s.disabled_at
       FROM deliveries AS d LEFT JOIN subscriptions AS s ON s.id = d.subscription_id
       WHERE d.id = ?1`,
    )
    .bind(deliveryId)
    .first<
      { subscription_id: string } & { [K in keyof ReplayTargetRow]: ReplayTargetRow[K] | null }
    >();
  if (row === null) return undefined;
  const { id, enabled } = row;
  const subscription =
    id === null || enabled === null ? null : toReplayTarget({ ...row, id, enabled });
  return { subscriptionId: row.subscription_id, subscription };
}

/**
 * The subscriptions a replay would target, enabled or not: `subscriptionId` alone when
 * given, else every one whose `event_types` is NULL or lists `eventType` (the replay's
 * own rule, worker/db/admin-deliveries.ts).
 *
 * @param eventType - the event's type.
 * @param subscriptionId - one subscription, or `null` for every match.
 */
export async function listReplayTargets(
  db: D1Database,
  eventType: string,
  subscriptionId: string | null,
): Promise<ReplayTarget[]> {
  const { results } = await db
    .prepare(
      `SELECT id, enabled, health_reason, disabled_at FROM subscriptions AS s
       WHERE (?2 IS NULL AND (s.event_types IS NULL
           OR EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = ?1)))
         OR s.id = ?2
       ORDER BY s.created_at, s.id`,
    )
    .bind(eventType, subscriptionId)
    .all<ReplayTargetRow>();
  return results.map(toReplayTarget);
}
