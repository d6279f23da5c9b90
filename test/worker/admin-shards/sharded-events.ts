/**
 * Helpers of the admin-over-shards tests: events stored where the real placement puts them
 * over the three test databases (with their fan-out reading the subscriptions of `DB`),
 * plain delivery and attempt rows in a chosen shard, and the listing's order.
 */
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { settingsOf } from '../../../worker/config.ts';
import type { DeliveryStatus } from '../../../worker/db/deliveries.ts';
import { fanOutDeliveriesStatement } from '../../../worker/db/deliveries.ts';
import { type EventShard, placeEvent } from '../../../worker/db/event-shards.ts';
import { subscriptionsViewFor } from '../../../worker/db/subscription-snapshot.ts';
import {
  insertWebhookEventStatement,
  type WebhookEventStatus,
} from '../../../worker/db/webhook-events.ts';
import { referenceOf, type WebhookEnvelope } from '../../../worker/relay/envelope.ts';
import { envelope } from '../routes/webhook-helpers.ts';
import { SHARDS, type ShardName, THREE_SHARDS } from '../shard-databases.ts';

/** The shard the real placement puts `eventId` in under {@link THREE_SHARDS}, at `now`. */
async function homeOf(eventId: string, now: number): Promise<EventShard> {
  const sharded = { ...env, ...THREE_SHARDS };
  return (await placeEvent(sharded, settingsOf(sharded), eventId, now)).home;
}

/** Options of {@link storeShardedEvent}. */
export interface ShardedEventInit {
  /** @default a fresh `evt_<uuid>` */
  readonly eventId?: string;
  /** Epoch ms. @default Date.now() */
  readonly receivedAt?: number;
  /** @default 'received' */
  readonly status?: WebhookEventStatus;
  /** Replaces the envelope's `data`; its `reference` is stored as the ingress stores it. */
  readonly data?: Record<string, unknown>;
}

/** An event stored in its home shard with its fan-out. */
export interface ShardedEvent {
  readonly eventId: string;
  readonly shard: ShardName;
  readonly receivedAt: number;
  readonly deliveryIds: string[];
}

/**
 * Stores an event of `eventType` in the shard its id is placed in, with its deliveries to
 * the matching subscriptions of `DB`, in one batch on that shard as the ingress does.
 */
export async function storeShardedEvent(
  eventType: string,
  init: ShardedEventInit = {},
): Promise<ShardedEvent> {
  const body = envelope({
    event_type: eventType,
    ...(init.eventId === undefined ? {} : { event_id: init.eventId }),
    ...(init.data === undefined ? {} : { data: init.data }),
  });
  const event = {
    eventId: body.event_id as string,
    eventType,
    receivedAt: init.receivedAt ?? Date.now(),
    reference: referenceOf(body as Pick<WebhookEnvelope, 'data'>),
    rawBody: JSON.stringify(body),
  };
  const home = await homeOf(event.eventId, event.receivedAt);
  const view = await subscriptionsViewFor(env.DB, home);
  const [, fanOut] = await home.db.batch<{ id: string }>([
    await insertWebhookEventStatement(home.db, event, init.status),
    fanOutDeliveriesStatement(home.db, event, view),
  ]);
  return {
    eventId: event.eventId,
    shard: home.name as ShardName,
    receivedAt: event.receivedAt,
    deliveryIds: (fanOut?.results ?? []).map((row) => row.id),
  };
}

/** A delivery row of {@link insertShardDelivery}. */
export interface ShardDeliveryInit {
  readonly eventId: string;
  readonly subscriptionId: string;
  /** @default 'pending' */
  readonly status?: DeliveryStatus;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms. @default createdAt */
  readonly updatedAt?: number;
}

/** Writes one delivery row into `shard` directly (no fan-out, no enqueue); returns its id. */
export async function insertShardDelivery(
  shard: ShardName,
  row: ShardDeliveryInit,
): Promise<string> {
  const id = `dlv_test_${crypto.randomUUID()}`;
  await env[shard]
    .prepare(
      `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
         last_status, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 0, NULL, NULL, ?5, ?6)`,
    )
    .bind(
      id,
      row.eventId,
      row.subscriptionId,
      row.status ?? 'pending',
      row.createdAt,
      row.updatedAt ?? row.createdAt,
    )
    .run();
  return id;
}

/** Writes a failed attempt (503, "down") of `deliveryId` into `shard` and marks it failed. */
export async function failDeliveryIn(
  shard: ShardName,
  deliveryId: string,
  at: number,
): Promise<void> {
  const db = env[shard];
  await db.batch([
    db
      .prepare(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, status, latency_ms,
           error, response_excerpt)
         VALUES (?1, 1, ?2, 503, 12, NULL, 'down')`,
      )
      .bind(deliveryId, at),
    db
      .prepare(
        `UPDATE deliveries SET status = 'failed', attempts = 1, last_status = 503,
           next_attempt_at = NULL, updated_at = ?2 WHERE id = ?1`,
      )
      .bind(deliveryId, at),
  ]);
}

/** A delivery row of `shard`, or `null`. */
export async function deliveryIn(
  shard: ShardName,
  deliveryId: string,
): Promise<{ status: string; updated_at: number; event_id: string } | null> {
  return env[shard]
    .prepare('SELECT status, updated_at, event_id FROM deliveries WHERE id = ?1')
    .bind(deliveryId)
    .first();
}

/** The (received_at, event_id) order of the listing: newest first, ties by id descending. */
export function newestFirst<T extends { receivedAt: number; eventId: string }>(
  events: readonly T[],
): T[] {
  return [...events].sort((a, b) =>
    a.receivedAt !== b.receivedAt
      ? b.receivedAt - a.receivedAt
      : a.eventId < b.eventId
        ? 1
        : a.eventId > b.eventId
          ? -1
          : 0,
  );
}

/** Expects every test database to be used by `events` (the test spreads over all three). */
export function expectEveryShard(events: readonly { shard: ShardName }[]): void {
  expect(new Set(events.map((event) => event.shard))).toEqual(new Set(SHARDS));
}
