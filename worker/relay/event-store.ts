/**
 * Storing a received webhook event where its id is placed (worker/db/event-shards.ts), with
 * its deliveries, and deduplicating it across a change of shards. With one generation of
 * shards an event has one place, and its primary key alone tells a copy, as always. After a
 * change of generation, a copy may be written under the new generation while the event is
 * stored under the old one, in another database: the event is inserted at home first, then
 * looked for in the other shards that may hold it (placement's `others`). Of two copies
 * racing, the one that looks second finds the other. A copy that finds another one
 * withdraws its own row (its deliveries go with it, never enqueued), then:
 * - answers as a duplicate when the row found is settled: marked kept (`kept_at`, set by a
 *   writer that looked and found nothing), older than the switch window (the request that
 *   wrote it has finished), or written outside every switch window (no copy could race it);
 * - else answers 409 `event_in_flight` with `Retry-After`: the other copy may have found this
 *   one too and withdrawn as well. The provider's retry then stores the event once, or finds
 *   it stored. Nothing is acknowledged that is not kept.
 * A writer within a switch window that finds no copy marks its row kept (one more write, only
 * for events received within the window around a generation's start).
 */
import type { Settings } from '../config.ts';
import {
  type DeliveryTarget,
  type DeliveryTargetRow,
  fanOutDeliveriesStatement,
  toDeliveryTargets,
} from '../db/deliveries.ts';
import {
  EVENT_SWITCH_WINDOW_MS,
  type EventShard,
  eventShardsOf,
  placeEvent,
} from '../db/event-shards.ts';
import { cachedSubscriptionsView } from '../db/subscription-cache.ts';
import {
  type ConfirmationState,
  findWebhookEvent,
  insertWebhookEventStatement,
  type NewWebhookEvent,
  type WebhookEventRecord,
  type WebhookEventStatus,
} from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';

/** What became of a received event's write. */
export type StoreOutcome =
  /** Stored now in `shard`, with the deliveries written there (none when it does not fan out). */
  | { readonly kind: 'stored'; readonly shard: EventShard; readonly deliveries: DeliveryTarget[] }
  /** Already stored (a copy): nothing written. */
  | { readonly kind: 'duplicate' }
  /** A copy written under another generation is still settling: withdrawn, to be retried. */
  | { readonly kind: 'in_flight' };

/** What to store: the event, its status and check, and whether it fans out now. */
export interface EventWrite {
  readonly event: NewWebhookEvent;
  readonly status: WebhookEventStatus;
  readonly confirmation: ConfirmationState;
  /** Whether its deliveries are written now (a confirmed or unchecked event). */
  readonly fansOut: boolean;
}

/**
 * Stores a received event in its home shard, with one `pending` delivery per matching
 * subscription (read from `DB`) in the same transaction when it fans out, then, around a
 * change of shards only, looks for a copy elsewhere (see the top of this file).
 *
 * @param env - the Worker's bindings (`DB` and the shards `D1_SHARDS` names).
 * @param settings - `shards` and `relayRetentionDays`.
 * @param write - the event and how it is stored; `event.receivedAt` (epoch ms) places it.
 * @returns stored (where, and its deliveries), a duplicate, or in flight.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding;
 *   whatever D1 throws (nothing acknowledged: the provider retries). A copy found elsewhere
 *   whose own row then cannot be withdrawn throws too, logged as
 *   `webhook_event_withdraw_failed`.
 */
export async function storeWebhookEvent(
  env: Env,
  settings: Settings,
  write: EventWrite,
): Promise<StoreOutcome> {
  const { event } = write;
  const { home, others } = await placeEvent(env, settings, event.eventId, event.receivedAt);
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
  if (inserted?.meta.changes !== 1) return { kind: 'duplicate' };
  const deliveries = toDeliveryTargets(fanOut?.results, home.name);
  if (others.length === 0) return { kind: 'stored', shard: home, deliveries };
  const found = await copiesElsewhere(others, event.eventId);
  if (found.length === 0) {
    if (nearSwitch(settings, event.receivedAt)) await markKept(home, event);
    return { kind: 'stored', shard: home, deliveries };
  }
  await withdraw(home, event);
  const settled = found.some(
    (copy) =>
      copy.kept_at !== null ||
      event.receivedAt - copy.received_at >= EVENT_SWITCH_WINDOW_MS ||
      !nearSwitch(settings, copy.received_at),
  );
  return settled ? { kind: 'duplicate' } : { kind: 'in_flight' };
}

/** Whether `at` (epoch ms) falls within the switch window of a generation's start. */
function nearSwitch(settings: Settings, at: number): boolean {
  return settings.shards.some(
    (generation, index) => index > 0 && Math.abs(at - generation.from) < EVENT_SWITCH_WINDOW_MS,
  );
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

interface CopyRow {
  received_at: number;
  kept_at: number | null;
}

// The copies of the event stored in `shards`.
async function copiesElsewhere(shards: readonly EventShard[], eventId: string): Promise<CopyRow[]> {
  const rows = await Promise.all(
    shards.map((shard) =>
      shard.db
        .prepare('SELECT received_at, kept_at FROM webhook_events WHERE event_id = ?1')
        .bind(eventId)
        .first<CopyRow>(),
    ),
  );
  return rows.filter((row): row is CopyRow => row !== null);
}

// Marks this request's row kept, so a later copy finding it answers as a duplicate. A failure
// only makes such copies answer 409 until the switch window has passed.
async function markKept(home: EventShard, event: NewWebhookEvent): Promise<void> {
  try {
    await home.db
      .prepare('UPDATE webhook_events SET kept_at = ?2 WHERE event_id = ?1 AND received_at = ?3')
      .bind(event.eventId, Date.now(), event.receivedAt)
      .run();
  } catch (error) {
    logEvent('warn', 'webhook_event_mark_failed', {
      event_id: event.eventId,
      shard: home.name,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}

// Deletes this request's own row (its deliveries cascade), never a copy stored before it.
async function withdraw(home: EventShard, event: NewWebhookEvent): Promise<void> {
  try {
    await home.db
      .prepare('DELETE FROM webhook_events WHERE event_id = ?1 AND received_at = ?2')
      .bind(event.eventId, event.receivedAt)
      .run();
  } catch (error) {
    // Its deliveries were never enqueued, but the sweeper would send them once overdue while
    // the copy elsewhere is delivered too: an operator must remove the row.
    logEvent('error', 'webhook_event_withdraw_failed', {
      event_id: event.eventId,
      shard: home.name,
      error_message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  }
}
