/**
 * D1 reads of the subscriptions a retry or replay would deliver to, enabled or not, with the
 * reason and time of a disable (migrations/0010), so the admin API can refuse to accept work
 * the queue consumer would skip. Deliveries live in the event shards, subscriptions in `DB`:
 * a read on another shard joins a snapshot of them (worker/db/subscription-snapshot.ts).
 * Every time is epoch milliseconds; statements bind with `?N`; `db` is a D1 binding.
 */
import { OPERATIONAL_TYPES, REPLAY_AUDIENCE } from './admin-deliveries.ts';
import { type EventShard, MAIN_SHARD } from './event-shards.ts';
import {
  readSubscriptionsSnapshot,
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
  viewOn,
} from './subscription-snapshot.ts';

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

/** A delivery's subscription as a retry checks it. */
export interface DeliveryTargetCheck {
  readonly subscriptionId: string;
  /** `null` when the subscription was deleted (deliveries keep their history without it). */
  readonly subscription: ReplayTarget | null;
}

/**
 * The subscription of a delivery, for a retry.
 *
 * @param deliveryId - the delivery.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 * @returns `undefined` when there is no such delivery in `db`.
 */
async function findDeliveryTarget(
  db: D1Database,
  deliveryId: string,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<DeliveryTargetCheck | undefined> {
  const row = await db
    .prepare(
      `${subscriptionsCte(view, 2)}SELECT d.subscription_id, s.id, s.enabled, s.health_reason, s.disabled_at
       FROM deliveries AS d LEFT JOIN subscriptions AS s ON s.id = d.subscription_id
       WHERE d.id = ?1`,
    )
    .bind(deliveryId, ...snapshotBinds(view))
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
 * Looks for a delivery in every event shard (its id does not say which holds it): one
 * query per shard, in parallel, after one read of the subscriptions' snapshot when a shard
 * other than `DB` is among them.
 *
 * @param main - the `DB` binding, where subscriptions live.
 * @param shards - every event shard (worker/db/event-shards.ts `everyEventShard`).
 * @param deliveryId - the delivery.
 * @returns the first shard holding it with its subscription, or `undefined` when none does.
 * @throws whatever D1 throws.
 */
export async function findDeliveryTargetInShards(
  main: D1Database,
  shards: readonly EventShard[],
  deliveryId: string,
): Promise<(DeliveryTargetCheck & { readonly shard: EventShard }) | undefined> {
  // Every shard other than DB reads the same snapshot: taken once.
  const snapshot = shards.every((shard) => shard.name === MAIN_SHARD)
    ? SUBSCRIPTIONS_TABLE
    : await readSubscriptionsSnapshot(main);
  const found = await Promise.all(
    shards.map((shard) => findDeliveryTarget(shard.db, deliveryId, viewOn(shard, snapshot))),
  );
  const index = found.findIndex((target) => target !== undefined);
  const target = found[index];
  const shard = shards[index];
  return target === undefined || shard === undefined ? undefined : { ...target, shard };
}

/**
 * The subscriptions a replay would target, enabled or not, by the replay's own rule
 * ({@link REPLAY_AUDIENCE}): `subscriptionId` alone when given, else every one the event's
 * type matches (a relay event only to those listing its type, never its subject).
 *
 * @param db - the event shard holding the event.
 * @param event - the event's id and type.
 * @param subscriptionId - one subscription, or `null` for every match.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export async function listReplayTargets(
  db: D1Database,
  event: { readonly eventId: string; readonly eventType: string },
  subscriptionId: string | null,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<ReplayTarget[]> {
  const { results } = await db
    .prepare(
      `${subscriptionsCte(view, 6)}SELECT s.id, s.enabled, s.health_reason, s.disabled_at FROM subscriptions AS s
       WHERE ${REPLAY_AUDIENCE}
       ORDER BY s.created_at, s.id`,
    )
    .bind(
      event.eventId,
      event.eventType,
      null,
      subscriptionId,
      OPERATIONAL_TYPES,
      ...snapshotBinds(view),
    )
    .all<ReplayTargetRow>();
  return results.map(toReplayTarget);
}
