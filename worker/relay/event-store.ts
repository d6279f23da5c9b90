/**
 * Writing a received webhook event to the D1 shard its id is placed in, with its deliveries,
 * and finding a stored event. Who calls the write: docs/architecture.md, "Webhook events
 * received once".
 */
import type { Settings } from '../config.ts';
import {
  type DeliveryTarget,
  type DeliveryTargetRow,
  fanOutDeliveriesStatement,
  toDeliveryTargets,
} from '../db/deliveries.ts';
import { type EventShard, eventShardNamed, eventShardsOf } from '../db/event-shards.ts';
import { cachedSubscriptionsView } from '../db/subscription-cache.ts';
import {
  type ConfirmationState,
  findWebhookEvent,
  insertWebhookEventStatement,
  type NewWebhookEvent,
  type WebhookEventRecord,
  type WebhookEventStatus,
} from '../db/webhook-events.ts';

/** What became of a received event's write. */
export type StoreOutcome =
  /**
   * Stored now in the shard named `shard`, with the deliveries written there (none when it
   * does not fan out).
   */
  | { readonly kind: 'stored'; readonly shard: string; readonly deliveries: DeliveryTarget[] }
  /** Already stored (a copy), in the shard named `shard`: nothing written. */
  | { readonly kind: 'duplicate'; readonly shard: string };

/** What to store: the event, its status and check, and whether it fans out now. */
export interface EventWrite {
  readonly event: NewWebhookEvent;
  readonly status: WebhookEventStatus;
  readonly confirmation: ConfirmationState;
  /** Whether its deliveries are written now (a confirmed or unchecked event). */
  readonly fansOut: boolean;
}

/**
 * Where an event is written and where it may already be, as binding names (what an RPC to
 * the event's object can carry): `placeEvent` in worker/db/event-shards.ts computes it.
 */
export interface EventPlacementNames {
  /** The shard of the generation in effect. */
  readonly home: string;
  /** Its shards in the other generations that may hold it, oldest first. */
  readonly others: readonly string[];
}

/**
 * Writes a received event in its home shard, with one `pending` delivery per matching
 * subscription in the same transaction when it fans out. A row of the same id already in
 * the home shard (a copy written before) makes it a duplicate; so does one in another
 * generation's shard, looked for first (reads only, and only for the retention after a
 * change of shards).
 *
 * @param env - the bindings of the caller (the ingress, or the event's object): `DB` and
 *   the shards.
 * @param placement - binding names of the home shard and the others that may hold it.
 * @param write - the event and how it is stored.
 * @returns stored (where, and its deliveries), or a duplicate (where the copy is).
 * @throws {HttpError} 503 `configuration_error` when a named binding is missing; whatever D1
 *   throws (nothing acknowledged: the provider retries).
 */
export async function writeWebhookEvent(
  env: Env,
  placement: EventPlacementNames,
  write: EventWrite,
): Promise<StoreOutcome> {
  const { event } = write;
  const others = placement.others.map((name) => eventShardNamed(env, name));
  const found = await Promise.all(others.map((shard) => holdsEvent(shard.db, event.eventId)));
  const holder = others.find((_, index) => found[index]);
  if (holder !== undefined) return { kind: 'duplicate', shard: holder.name };
  const home = eventShardNamed(env, placement.home);
  const insert = await insertWebhookEventStatement(
    home.db,
    event,
    write.status,
    write.confirmation,
  );
  const statements = [insert];
  if (write.fansOut) {
    const view = await cachedSubscriptionsView(env, home);
    statements.push(fanOutDeliveriesStatement(home.db, event, view));
  }
  const [inserted, fanOut] = await home.db.batch<DeliveryTargetRow>(statements);
  if (inserted?.meta.changes !== 1) return { kind: 'duplicate', shard: home.name };
  const deliveries = toDeliveryTargets(fanOut?.results, home.name);
  return { kind: 'stored', shard: home.name, deliveries };
}

/**
 * The stored event with this id, from the first shard that may hold it and does.
 *
 * @param env - the Worker's bindings.
 * @param settings - `shards` and `relayRetentionDays`.
 * @param eventId - the provider's `event_id`.
 * @param now - epoch ms.
 * @returns the record and its shard, or `undefined` when no shard holds it.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding;
 *   whatever D1 throws.
 */
export async function findStoredEvent(
  env: Env,
  settings: Settings,
  eventId: string,
  now: number,
): Promise<{ readonly record: WebhookEventRecord; readonly shard: EventShard } | undefined> {
  const shards = await eventShardsOf(env, settings, eventId, now);
  const records = await Promise.all(shards.map((shard) => findWebhookEvent(shard.db, eventId)));
  for (const [index, record] of records.entries()) {
    const shard = shards[index];
    if (record !== undefined && shard !== undefined) return { record, shard };
  }
  return undefined;
}

// Whether `db` holds the event: its primary key alone, no body read.
async function holdsEvent(db: D1Database, eventId: string): Promise<boolean> {
  const row = await db
    .prepare('SELECT 1 AS held FROM webhook_events WHERE event_id = ?1')
    .bind(eventId)
    .first();
  return row !== null;
}
