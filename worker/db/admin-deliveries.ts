/**
 * D1 queries on `deliveries` for the admin API (`/admin/deliveries`, and the replay of
 * `/admin/events`): deliveries newest first with their event's type, keyset-paginated;
 * deliveries counted per hour of creation and by status; the reset of one delivery for a
 * retry; and replay's upsert of an event's deliveries. Listings and counts read every event
 * shard given (worker/db/event-shards.ts); a retry or replay writes in the one holding it.
 * Every time is epoch milliseconds; statements bind with `?N`; `db` is a D1 binding.
 */

import { OPERATIONAL_DATA_SCHEMAS } from '../relay/operational-event-schemas.ts';
import {
  DELIVERY_STATUSES,
  type DeliveryRecord,
  type DeliveryStatus,
  type DeliveryTarget,
  type DeliveryTargetRow,
  NEW_DELIVERY_ID,
  toDeliveryRecord,
  toDeliveryTargets,
} from './deliveries.ts';
import type { EventShard } from './event-shards.ts';
import type { KeysetCursor } from './keyset.ts';
import { databasesOf, mergedKeysetPage } from './merged-pages.ts';
import {
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
} from './subscription-snapshot.ts';
import { bodySubscriptionIdSql } from './webhook-events.ts';

/**
 * Milliseconds in an hour: the width of a bucket of {@link countDeliveriesByHour}.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const HOUR_MS = 3_600_000;

/** A delivery as the listing shows it: the stored delivery and its event's type. */
type ListedDelivery = DeliveryRecord & { readonly eventType: string };

/** Filters and page of {@link listRecentDeliveries}; `null` = no filter. */
interface DeliveryListQuery {
  readonly status: DeliveryStatus | null;
  readonly subscriptionId: string | null;
  readonly eventId: string | null;
  /** Strictly after this (updated_at, id). */
  readonly after: KeysetCursor | null;
  /** Rows per page, 1..100. */
  readonly pageSize: number;
}

/** One page of deliveries and the cursor of the next, `null` on the last page. */
interface DeliveryPage {
  readonly deliveries: ListedDelivery[];
  readonly next: KeysetCursor | null;
}

type ListedRow = Parameters<typeof toDeliveryRecord>[0] & { event_type: string };

/**
 * One page of deliveries, most recently updated first (ties by id, descending): the ones
 * an operator watches (being retried, just settled) come first. Keyset-paginated on
 * (updated_at, id); the filters given are all applied, each served by an index of
 * migrations/0006 (an event's deliveries by UNIQUE (event_id, subscription_id)).
 * Every write sets `updated_at` to the time of the write, so a delivery updated between
 * two page reads moves ahead of the cursor: the later pages miss it (none shows it
 * twice), a new first page has it. Over several event shards each reads one such page with
 * the same cursor, merged newest first (worker/db/merged-pages.ts).
 *
 * @param db - the D1 binding holding the deliveries, or every event shard's.
 * @param query - filters, cursor and page size.
 * @returns the page; `next` is set when at least one more row exists.
 * @throws {Error} when a row holds an unknown status; whatever D1 throws.
 */
export async function listRecentDeliveries(
  db: D1Database | readonly D1Database[],
  query: DeliveryListQuery,
): Promise<DeliveryPage> {
  const page = await mergedKeysetPage<ListedRow>(
    databasesOf(db),
    {
      select: `SELECT d.*, e.event_type FROM deliveries AS d
        JOIN webhook_events AS e ON e.event_id = d.event_id`,
      keys: ['d.updated_at', 'd.id'],
      filters: [
        ['d.status = ?', query.status],
        ['d.subscription_id = ?', query.subscriptionId],
        ['d.event_id = ?', query.eventId],
      ],
      after: query.after,
      pageSize: query.pageSize,
    },
    (row) => ({ at: row.updated_at, id: row.id }),
  );
  const deliveries = page.rows.map((row) => ({
    ...toDeliveryRecord(row),
    eventType: row.event_type,
  }));
  return { deliveries, next: page.next };
}

/** The deliveries created in one hour, counted by their current status. */
export type HourlyDeliveryCounts = { readonly hour: number } & Record<DeliveryStatus, number>;

/**
 * Deliveries counted per UTC hour of `created_at`, under each one's current status, for
 * the `hours` hours ending with the one holding `now`: one GROUP BY over the
 * (created_at, status) index per database (every event shard's, in parallel, summed by
 * hour), then the hours without deliveries filled with zeros.
 *
 * @param db - the D1 binding holding the deliveries, or every event shard's.
 * @param hours - how many hours, at least 1.
 * @param now - the current time, epoch ms; its hour is the last bucket.
 * @returns exactly `hours` buckets, oldest first, `hour` the bucket's start (epoch ms, a
 *   whole UTC hour).
 * @throws whatever D1 throws.
 */
export async function countDeliveriesByHour(
  db: D1Database | readonly D1Database[],
  hours: number,
  now: number,
): Promise<HourlyDeliveryCounts[]> {
  const firstHour = Math.floor(now / HOUR_MS) - (hours - 1);
  // Integer division of the INTEGER column by an integer literal: the hour number.
  const counted = await Promise.all(
    databasesOf(db).map(async (shard) => {
      const { results } = await shard
        .prepare(
          `SELECT created_at / ${HOUR_MS} AS hour, status, COUNT(*) AS n FROM deliveries
       WHERE created_at >= ?1 AND created_at < ?2
       GROUP BY hour, status`,
        )
        .bind(firstHour * HOUR_MS, (firstHour + hours) * HOUR_MS)
        .all<{ hour: number; status: string; n: number }>();
      return results;
    }),
  );
  const buckets = Array.from({ length: hours }, (_, index) => ({
    hour: (firstHour + index) * HOUR_MS,
    pending: 0,
    delivered: 0,
    failed: 0,
  }));
  for (const row of counted.flat()) {
    const bucket = buckets[row.hour - firstHour];
    const status = row.status as DeliveryStatus;
    if (bucket !== undefined && DELIVERY_STATUSES.includes(status)) bucket[status] += row.n;
  }
  return buckets;
}

/**
 * The relay's own event types, as JSON for {@link REPLAY_AUDIENCE} (bound as `?5`).
 */
export const OPERATIONAL_TYPES = JSON.stringify(Object.keys(OPERATIONAL_DATA_SCHEMAS));

/**
 * Which subscription `s` a replay of event `?1` of type `?2` is for, enabled or not: the one
 * named by `?4`, or, when `?4` is NULL, every one whose `event_types` lists the type, or is
 * NULL for a type not in `?5` ({@link OPERATIONAL_TYPES}), never the subscription a relay
 * event is about. One rule for the replay and its checks of disabled subscriptions.
 */
export const REPLAY_AUDIENCE = `((?4 IS NULL
      AND ((s.event_types IS NULL AND ?2 NOT IN (SELECT value FROM json_each(?5)))
        OR EXISTS (SELECT 1 FROM json_each(s.event_types) AS t WHERE t.value = ?2))
      AND s.id IS NOT (SELECT ${bodySubscriptionIdSql('e')}
        FROM webhook_events AS e
        WHERE e.event_id = ?1 AND ?2 IN (SELECT value FROM json_each(?5))))
    OR s.id = ?4)`;

/**
 * Replays an event: for every enabled subscription matching its type (or only
 * `subscriptionId`, whatever its filter), inserts a `pending` delivery due `now`, or,
 * where UNIQUE (event_id, subscription_id) already holds one, resets that row to
 * `pending` (attempts and their history are kept, so attempt numbers keep counting). One of
 * the relay's own events goes, as when it was raised, only to the subscriptions that list its
 * type, never to the one its `data.subscription_id` names (unless that one is asked for).
 *
 * @param shard - the event shard holding the event (worker/db/event-shards.ts).
 * @param view - how `shard` reads the subscriptions (worker/db/subscription-snapshot.ts).
 * @param event - the event's id and type.
 * @param subscriptionId - one subscription, or `null` for all that match.
 * @param now - epoch ms: the due time and update time.
 * @param before - statements on `shard` run first in the same transaction (e.g. recording a
 *   forced replay on the event), so the record and the deliveries are written together or not at all.
 * @returns the deliveries now pending, with their subscriptions and `shard`'s name.
 */
export async function replayDeliveries(
  shard: EventShard,
  view: SubscriptionsView,
  event: { readonly eventId: string; readonly eventType: string },
  subscriptionId: string | null,
  now: number,
  before: readonly D1PreparedStatement[] = [],
): Promise<DeliveryTarget[]> {
  const replay = shard.db
    .prepare(
      `${subscriptionsCte(view, 6)}INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
         last_status, created_at, updated_at)
       SELECT ${NEW_DELIVERY_ID}, ?1, s.id, 'pending', 0, ?3, NULL, ?3, ?3
       FROM subscriptions AS s
       WHERE s.enabled = 1 AND ${REPLAY_AUDIENCE}
       ON CONFLICT (event_id, subscription_id) DO UPDATE
         SET status = 'pending', next_attempt_at = excluded.next_attempt_at,
           updated_at = excluded.updated_at
       RETURNING id, subscription_id`,
    )
    .bind(
      event.eventId,
      event.eventType,
      now,
      subscriptionId,
      OPERATIONAL_TYPES,
      ...snapshotBinds(view),
    );
  const results = await shard.db.batch<DeliveryTargetRow>([...before, replay]);
  return toDeliveryTargets(results.at(-1)?.results, shard.name);
}

/**
 * Resets one delivery to `pending`, due `now`, whatever its status (an admin retry).
 *
 * @param id - the delivery id.
 * @param now - epoch ms: the due time and update time.
 * @returns the reset record, or `undefined` when there is no such delivery.
 */
export async function resetDelivery(
  db: D1Database,
  id: string,
  now: number,
): Promise<DeliveryRecord | undefined> {
  const row = await db
    .prepare(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = ?2, updated_at = ?2
       WHERE id = ?1 RETURNING *`,
    )
    .bind(id, now)
    .first<Parameters<typeof toDeliveryRecord>[0]>();
  return row === null ? undefined : toDeliveryRecord(row);
}

/**
 * How many deliveries are in each status, summed over the databases given (every event
 * shard's, read in parallel); a status without any counts 0.
 *
 * @param db - the D1 binding holding the deliveries, or every event shard's.
 * @throws whatever D1 throws.
 */
export async function countDeliveriesByStatus(
  db: D1Database | readonly D1Database[],
): Promise<Record<DeliveryStatus, number>> {
  const counted = await Promise.all(
    databasesOf(db).map(async (shard) => {
      const { results } = await shard
        .prepare('SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status')
        .all<{ status: string; n: number }>();
      return results;
    }),
  );
  const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const row of counted.flat()) {
    if (row.status in counts) counts[row.status as DeliveryStatus] += row.n;
  }
  return counts;
}
