/**
 * D1 reads of the subscriptions a retry or replay would deliver to, enabled or not, with the
 * reason and time of a disable (migrations/0010), so the admin API can refuse to accept work
 * the queue consumer would skip. Every time is epoch milliseconds; statements bind with
 * `?N`; `db` is always the D1 binding.
 */
import { OPERATIONAL_TYPES, REPLAY_AUDIENCE } from './admin-deliveries.ts';

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
 * The subscriptions a replay would target, enabled or not, by the replay's own rule
 * ({@link REPLAY_AUDIENCE}): `subscriptionId` alone when given, else every one the event's
 * type matches (a relay event only to those listing its type, never its subject).
 *
 * @param event - the event's id and type.
 * @param subscriptionId - one subscription, or `null` for every match.
 */
export async function listReplayTargets(
  db: D1Database,
  event: { readonly eventId: string; readonly eventType: string },
  subscriptionId: string | null,
): Promise<ReplayTarget[]> {
  const { results } = await db
    .prepare(
      `SELECT s.id, s.enabled, s.health_reason, s.disabled_at FROM subscriptions AS s
       WHERE ${REPLAY_AUDIENCE}
       ORDER BY s.created_at, s.id`,
    )
    .bind(event.eventId, event.eventType, null, subscriptionId, OPERATIONAL_TYPES)
    .all<ReplayTargetRow>();
  return results.map(toReplayTarget);
}
