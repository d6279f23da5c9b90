/**
 * Helpers of the recovery tests over three event shards (`D1_SHARDS` = DB, DB_SHARD_1,
 * DB_SHARD_2): events and deliveries written where the placement puts each event id, and
 * the steps of a recovery job run through the real Worker's `queue` handler, each step's
 * messages recorded.
 */
import type { QueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { settingsOf } from '../../../worker/config.ts';
import type { DeliveryStatus } from '../../../worker/db/deliveries.ts';
import { placeEvent } from '../../../worker/db/event-shards.ts';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { recordingQueue, runQueue } from '../relay/delivery-helpers.ts';
import { database, SHARDS, type ShardName, THREE_SHARDS } from '../shard-databases.ts';

/** The shard the placement puts `eventId` in, with three shards. */
async function homeOf(eventId: string): Promise<ShardName> {
  const sharded = { ...env, ...THREE_SHARDS };
  const placed = await placeEvent(sharded, settingsOf(sharded), eventId, Date.now());
  return placed.home.name as ShardName;
}

/**
 * Fresh event ids, `count[shard]` of them placed in each shard (ids are drawn until every
 * shard has its count; at most 40 draws per id wanted).
 */
export async function eventIdsOn(
  count: Readonly<Partial<Record<ShardName, number>>>,
): Promise<Record<ShardName, string[]>> {
  const ids: Record<ShardName, string[]> = { DB: [], DB_SHARD_1: [], DB_SHARD_2: [] };
  const wanted = SHARDS.reduce((sum, shard) => sum + (count[shard] ?? 0), 0);
  for (let draw = 0; draw < 40 * wanted; draw += 1) {
    if (SHARDS.every((shard) => ids[shard].length >= (count[shard] ?? 0))) break;
    const id = `evt_${crypto.randomUUID()}`;
    const shard = await homeOf(id);
    if (ids[shard].length < (count[shard] ?? 0)) ids[shard].push(id);
  }
  for (const shard of SHARDS) expect(ids[shard]).toHaveLength(count[shard] ?? 0);
  return ids;
}

/** Options of {@link seedOnShards}. */
export interface ShardSeed {
  readonly subscriptionId: string;
  readonly eventType: string;
  /** Deliveries wanted in each shard. */
  readonly count: Readonly<Partial<Record<ShardName, number>>>;
  /** @default 'failed' */
  readonly status?: DeliveryStatus;
  /** Creation time of each shard's first delivery, epoch ms; each next one is 1 ms later. */
  readonly createdAt: number;
}

/** A delivery seeded by {@link seedOnShards}: its id and the shard it is stored in. */
export interface SeededDelivery {
  readonly deliveryId: string;
  readonly eventId: string;
  readonly shard: ShardName;
}

/**
 * Writes events of `eventType`, each in the shard the placement puts its id, with one
 * delivery of each to `subscriptionId` beside it (one batch per shard; no fan-out, no
 * enqueue).
 *
 * @returns the deliveries, by shard in {@link SHARDS} order, oldest first in each.
 */
export async function seedOnShards(seed: ShardSeed): Promise<SeededDelivery[]> {
  const ids = await eventIdsOn(seed.count);
  const seeded = await Promise.all(
    SHARDS.map(async (shard) => {
      const db = database(shard);
      const rows = ids[shard].map((eventId, index) => ({
        eventId,
        deliveryId: `dlv_${crypto.randomUUID()}`,
        at: seed.createdAt + index,
      }));
      if (rows.length === 0) return [];
      const events = await Promise.all(
        rows.map((row) =>
          insertWebhookEventStatement(db, {
            eventId: row.eventId,
            eventType: seed.eventType,
            receivedAt: row.at,
            reference: null,
            rawBody: JSON.stringify({
              event_type: seed.eventType,
              event_id: row.eventId,
              data: {},
            }),
          }),
        ),
      );
      await db.batch([
        ...events,
        ...rows.map((row) =>
          db
            .prepare(
              `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts,
                 next_attempt_at, last_status, created_at, updated_at)
               VALUES (?1, ?2, ?3, ?4, 0, NULL, NULL, ?5, ?5)`,
            )
            .bind(
              row.deliveryId,
              row.eventId,
              seed.subscriptionId,
              seed.status ?? 'failed',
              row.at,
            ),
        ),
      ]);
      return rows.map((row) => ({ deliveryId: row.deliveryId, eventId: row.eventId, shard }));
    }),
  );
  return seeded.flat();
}

/** The statuses of deliveries as each one's shard stores them, by id. */
export async function statusesOf(
  deliveries: readonly SeededDelivery[],
): Promise<Record<string, string>> {
  const found = await Promise.all(
    SHARDS.map(async (shard) => {
      const ids = deliveries.filter((d) => d.shard === shard).map((d) => d.deliveryId);
      const { results } = await database(shard)
        .prepare('SELECT id, status FROM deliveries WHERE id IN (SELECT value FROM json_each(?1))')
        .bind(JSON.stringify(ids))
        .all<{ id: string; status: string }>();
      return results.map((row) => [row.id, row.status] as const);
    }),
  );
  return Object.fromEntries(found.flat());
}

/** A message body sent to a recording producer. */
type Body = Record<string, unknown>;

/** What a recovery job's steps sent: delivery messages and further step messages. */
export interface StepsSent {
  readonly deliveries: Body[];
  readonly steps: Body[];
  /** The queue handler's result of every step run. */
  readonly results: QueueResult[];
}

/** Options of {@link driveJob}. */
export interface DriveOptions {
  /** How each step message is delivered: once, twice one after the other, or twice in one batch. */
  readonly copies?: 'once' | 'again' | 'together';
  /** Bindings of the run of one page (by page number), e.g. a faulty `DB`; absent: the shards'. */
  readonly bindingsFor?: (page: number) => Partial<Env> | undefined;
}

/**
 * Runs a job's steps from `first` through the real queue handler with three shards until no
 * step message is left (at most 20 rounds), each step's messages recorded; a step retried by
 * the handler is run again (with its attempts counted up) before the next.
 *
 * @returns every delivery message and step message sent, and each run's result.
 */
export async function driveJob(first: Body, options: DriveOptions = {}): Promise<StepsSent> {
  const sent: StepsSent = { deliveries: [], steps: [], results: [] };
  let pending: Body[] = [first];
  for (let round = 0; round < 20 && pending.length > 0; round += 1) {
    const recording = recordingQueue();
    for (const body of pending) {
      const page = body.page as number;
      const bindings = {
        ...THREE_SHARDS,
        DELIVERIES: recording.queue,
        ...options.bindingsFor?.(page),
      };
      const copies = options.copies ?? 'once';
      const batches = copies === 'together' ? [[{ body }, { body }]] : [[{ body }]];
      if (copies === 'again') batches.push([{ body }]);
      for (const [index, batch] of batches.entries()) {
        const messages = batch.map((m) => ({ ...m, attempts: index + 1 }));
        let result = await runQueue(DELIVERIES_QUEUE, messages, bindings);
        sent.results.push(result);
        // A retried step runs again with its attempts counted, as the queue would send it.
        for (let attempt = 2; result.retryMessages.length > 0 && attempt <= 5; attempt += 1) {
          const retry = { ...THREE_SHARDS, DELIVERIES: recording.queue };
          result = await runQueue(DELIVERIES_QUEUE, [{ body, attempts: attempt }], retry);
          sent.results.push(result);
        }
      }
    }
    const bodies = recording.batches.flat().map((m) => m.body as Body);
    sent.deliveries.push(...bodies.filter((b) => typeof b.deliveryId === 'string'));
    const steps = bodies.filter((b) => b.kind === 'recover');
    sent.steps.push(...steps);
    pending = steps.filter((s, i, all) => all.findIndex((o) => o.page === s.page) === i);
  }
  expect(pending).toEqual([]);
  return sent;
}

/** How many times each delivery was enqueued, and the shard each message named (`DB` when none). */
export function enqueuedShards(deliveries: readonly Body[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const body of deliveries) {
    const id = body.deliveryId as string;
    out[id] = [...(out[id] ?? []), typeof body.shard === 'string' ? body.shard : 'DB'];
  }
  return out;
}

/** The shard of each seeded delivery, once, as {@link enqueuedShards} would show it. */
export function expectedShards(deliveries: readonly SeededDelivery[]): Record<string, string[]> {
  return Object.fromEntries(deliveries.map((d) => [d.deliveryId, [d.shard]]));
}
