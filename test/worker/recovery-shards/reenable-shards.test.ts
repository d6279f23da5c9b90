/**
 * Enabling a subscription again over three event shards: the events it missed while
 * disabled are counted on every shard, its waiting deliveries re-queued on every shard, and
 * the `missed_events` job writes each missed event's delivery beside the event, in its
 * shard, and enqueues it once naming that shard. Through the admin API, the real Worker's
 * `queue` handler and the real D1 databases, each step's messages recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import { RECOVERY_PAGE_SIZE } from '../../../worker/relay/recover.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
} from '../relay/delivery-helpers.ts';
import { recoveryJob } from '../relay/recovery-helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import { database, SHARDS, type ShardName, THREE_SHARDS } from '../shard-databases.ts';
import {
  driveJob,
  enqueuedShards,
  eventIdsOn,
  expectedShards,
  type SeededDelivery,
  seedOnShards,
} from './shard-recovery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const HOUR_MS = 3_600_000;

/** `PATCH /admin/subscriptions/:id` with three shards, its messages sent to `queue`. */
function patch(id: string, json: unknown, queue: Queue) {
  return fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }), {
    ...THREE_SHARDS,
    DELIVERIES: queue,
  });
}

/** Stores received events of `eventType` in the shard each id is placed in, no delivery. */
async function storeMissed(eventType: string, ids: Record<ShardName, string[]>) {
  const receivedAt = Date.now();
  await Promise.all(
    SHARDS.filter((shard) => ids[shard].length > 0).map(async (shard) => {
      const db = database(shard);
      const events = await Promise.all(
        ids[shard].map((eventId) =>
          insertWebhookEventStatement(db, {
            eventId,
            eventType,
            receivedAt,
            reference: null,
            rawBody: JSON.stringify({ event_type: eventType, event_id: eventId, data: {} }),
          }),
        ),
      );
      await db.batch(events);
    }),
  );
}

/** The deliveries to `subscriptionId` of `eventIds` each shard holds, as delivery id → shard. */
async function deliveriesOn(subscriptionId: string, eventIds: readonly string[]) {
  const found = await Promise.all(
    SHARDS.map(async (shard) => {
      const { results } = await database(shard)
        .prepare(
          `SELECT id, event_id FROM deliveries
           WHERE subscription_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))`,
        )
        .bind(subscriptionId, JSON.stringify(eventIds))
        .all<{ id: string; event_id: string }>();
      return results.map((row) => ({ deliveryId: row.id, eventId: row.event_id, shard }));
    }),
  );
  return found.flat() satisfies SeededDelivery[];
}

describe('PATCH /admin/subscriptions/:id re-enabling over event shards', () => {
  it('should count the missed events of every shard, re-queue every shard and deliver each missed event once from its shard', async () => {
    const eventType = `missed_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
    // Waiting deliveries of events fanned out before the disable, one in each shard.
    const waiting = await seedOnShards({
      subscriptionId: subscription.id,
      eventType,
      count: { DB: 1, DB_SHARD_1: 1, DB_SHARD_2: 1 },
      status: 'pending',
      createdAt: Date.now() - HOUR_MS,
    });
    const off = await patch(subscription.id, { enabled: false }, recordingQueue().queue);
    expect(off.status).toBe(200);
    // Missed while disabled: more than a page of them in DB_SHARD_1.
    const ids = await eventIdsOn({ DB: 2, DB_SHARD_1: RECOVERY_PAGE_SIZE + 1, DB_SHARD_2: 3 });
    await storeMissed(eventType, ids);
    const missed = SHARDS.flatMap((shard) => ids[shard]);

    const start = recordingQueue();
    const res = await patch(subscription.id, { enabled: true, requeue_pending: true }, start.queue);

    expect(res.status).toBe(200);
    const data = await dataOf<Record<string, unknown>>(res);
    expect(data.missed_events).toEqual({ count: missed.length, capped: false });
    expect(data.requeued).toBe(waiting.length);
    const bodies = start.batches.flat().map((m) => m.body as Record<string, unknown>);
    const requeued = bodies.filter((b) => typeof b.deliveryId === 'string');
    expect(enqueuedShards(requeued)).toEqual(expectedShards(waiting));
    expect(requeued[0]).toMatchObject({ trigger: 'recover' });
    const jobId = (data.recovery_job as { id: string }).id;
    const first = bodies.find((b) => b.kind === 'recover');
    expect(first).toEqual({ kind: 'recover', jobId, page: 0 });

    // Every page message twice in one batch: each page is still taken once.
    const sent = await driveJob(first ?? {}, { copies: 'together' });

    const written = await deliveriesOn(subscription.id, missed);
    expect(written.map((d) => d.eventId).sort()).toEqual([...missed].sort());
    const placed = Object.fromEntries(SHARDS.flatMap((s) => ids[s].map((id) => [id, s])));
    for (const delivery of written) expect(delivery.shard).toBe(placed[delivery.eventId]);
    expect(enqueuedShards(sent.deliveries)).toEqual(expectedShards(written));
    // DB: one page; DB_SHARD_1: a full page and one more; DB_SHARD_2: one page.
    expect(await recoveryJob(jobId)).toMatchObject({
      state: 'done',
      pages: 4,
      matched: missed.length,
      enqueued: missed.length,
      skipped_disabled: 0,
    });
  }, 60_000);

  it('should count the missed events of every shard without requeue_pending, and send nothing', async () => {
    const eventType = `missed_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
    const off = await patch(subscription.id, { enabled: false }, recordingQueue().queue);
    expect(off.status).toBe(200);
    const ids = await eventIdsOn({ DB: 1, DB_SHARD_1: 2, DB_SHARD_2: 2 });
    await storeMissed(eventType, ids);

    const { queue, batches } = recordingQueue();
    const res = await patch(subscription.id, { enabled: true }, queue);

    expect(res.status).toBe(200);
    const data = await dataOf<Record<string, unknown>>(res);
    expect(data.missed_events).toEqual({ count: 5, capped: false });
    expect(batches).toEqual([]);
  }, 30_000);
});
