/**
 * Subscriptions as an event shard's statements read them. Subscriptions live in `DB` only;
 * the statements that fan an event out, replay it or recover deliveries join `subscriptions`.
 * Run on `DB` they read the table as always. Run on another shard they read a snapshot of
 * the subscriptions, taken from `DB` just before and bound as one JSON parameter, under the
 * same name: a `WITH subscriptions AS (...)` in front of the statement shadows the shard's
 * own (empty) table, so one SQL text serves both. The snapshot holds only the columns those
 * statements read, never a secret or a URL.
 */
import { type EventShard, MAIN_SHARD } from './event-shards.ts';
import type { SubscriptionRecord } from './subscription-rows.ts';

/** How a shard's statement reads `subscriptions`: the table, or a snapshot taken from `DB`. */
export interface SubscriptionsView {
  /** The snapshot as JSON text (an array of rows); `null` reads the table itself. */
  readonly snapshot: string | null;
}

/** The view of a statement that runs on `DB`: the table itself. */
export const SUBSCRIPTIONS_TABLE: SubscriptionsView = Object.freeze({ snapshot: null });

// The columns a snapshot carries, and the SQL that reads them back as a table.
const COLUMNS = [
  'id',
  'event_types',
  'enabled',
  'created_at',
  'disabled_at',
  'health_reason',
] as const;

/**
 * The view a statement on `shard` needs: the table on `DB`, else a snapshot read from `DB`
 * now (one query). The admin API's reads use it; the fan-out of an event reads this
 * isolate's copy instead (worker/db/subscription-cache.ts, `cachedSubscriptionsView`).
 *
 * @param main - the `DB` binding, where subscriptions live.
 * @param shard - where the statement runs.
 * @throws whatever D1 throws reading the snapshot.
 */
export async function subscriptionsViewFor(
  main: D1Database,
  shard: EventShard,
): Promise<SubscriptionsView> {
  if (shard.name === MAIN_SHARD) return SUBSCRIPTIONS_TABLE;
  return readSubscriptionsSnapshot(main);
}

/**
 * The snapshot of subscriptions already read, as a shard's statements bind it.
 *
 * @param records - every subscription.
 */
export function snapshotOf(records: readonly SubscriptionRecord[]): SubscriptionsView {
  const rows = records.map(
    (record): Record<(typeof COLUMNS)[number], unknown> => ({
      id: record.id,
      event_types: record.eventTypes === null ? null : JSON.stringify(record.eventTypes),
      enabled: record.enabled ? 1 : 0,
      created_at: record.createdAt,
      disabled_at: record.health.disabledAt,
      health_reason: record.health.reason,
    }),
  );
  return { snapshot: JSON.stringify(rows) };
}

/**
 * A snapshot of the subscriptions, read from `DB` now (one query), for statements on shards
 * other than `DB`.
 *
 * @param main - the `DB` binding.
 * @throws whatever D1 throws.
 */
export async function readSubscriptionsSnapshot(main: D1Database): Promise<SubscriptionsView> {
  const fields = COLUMNS.map((column) => `'${column}', ${column}`).join(', ');
  const row = await main
    .prepare(`SELECT json_group_array(json_object(${fields})) AS snapshot FROM subscriptions`)
    .first<{ snapshot: string }>();
  return { snapshot: row?.snapshot ?? '[]' };
}

/**
 * The view a statement on `shard` uses, given a snapshot already read: the table on `DB`.
 *
 * @param shard - where the statement runs.
 * @param snapshot - from {@link readSubscriptionsSnapshot}.
 */
export function viewOn(shard: EventShard, snapshot: SubscriptionsView): SubscriptionsView {
  return shard.name === MAIN_SHARD ? SUBSCRIPTIONS_TABLE : snapshot;
}

/**
 * The `WITH` clause to put in front of a statement that reads `subscriptions`: empty for the
 * table, else the snapshot bound as parameter `?<param>`.
 *
 * @param view - from {@link subscriptionsViewFor}.
 * @param param - the number of the parameter the snapshot is bound to (the statement's
 *   next free one); bind {@link snapshotBinds} there.
 */
export function subscriptionsCte(view: SubscriptionsView, param: number): string {
  if (view.snapshot === null) return '';
  const columns = COLUMNS.map((column) => `j.value ->> '$.${column}' AS ${column}`).join(', ');
  return `WITH subscriptions AS (SELECT ${columns} FROM json_each(?${param}) AS j) `;
}

/**
 * The values to bind after a statement's own for its view: none for the table, else the
 * snapshot.
 *
 * @param view - from {@link subscriptionsViewFor}.
 */
export function snapshotBinds(view: SubscriptionsView): readonly string[] {
  return view.snapshot === null ? [] : [view.snapshot];
}
