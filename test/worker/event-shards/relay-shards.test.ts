/**
 * Webhook events spread over three D1 databases (`D1_SHARDS`), through the real ingress,
 * queue consumer, subscriber outboxes and the recording receiver over HTTP: each event, its
 * deliveries and their attempts in the shard its id is placed in, the subscriptions and
 * their health in `DB`, the queue messages naming the shard.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { shardOfMessage } from '../../../worker/db/event-shards.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { announceBacklog } from '../../../worker/relay/operational-alerts.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
} from '../relay/delivery-helpers.ts';
import { heldDeliveries, outboxOf } from '../relay/outbox-helpers.ts';
import {
  database,
  eventIdIn,
  SHARDS,
  type ShardName,
  THREE_SHARDS,
  THREE_SHARDS_SETTING,
} from '../shard-databases.ts';
import { deliveriesIn, holdersOf, ingest } from './event-shard-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const overrides = THREE_SHARDS;

const receivedIds = async (key: string) =>
  (await receivedUnder(key)).map((request) => request.headers['webhook-id']);

describe('webhook events over three shards', () => {
  it('should store each event with its deliveries in its shard, deliver it from there, and count its health in DB', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await createReceiverSubscription({ eventTypes: [type], query: { status: '204' } });
    const placed: { id: string; shard: ShardName }[] = [];
    for (const shard of SHARDS) {
      for (let n = 0; n < 2; n += 1) placed.push({ id: await eventIdIn(shard), shard });
    }
    const messages = [];
    for (const { id, shard } of placed) {
      const answer = await ingest(THREE_SHARDS_SETTING, id, type);
      expect(answer).toMatchObject({ status: 200, body: { duplicate: false } });
      expect(await holdersOf(id)).toEqual([shard]);
      const [delivery] = await deliveriesIn(shard, id);
      expect(delivery).toMatchObject({ subscription_id: sub.subscription.id, status: 'pending' });
      // DB's messages stay as they were before shards; the others name theirs.
      expect(answer.messages).toEqual([
        {
          deliveryId: delivery?.id,
          subscriptionId: sub.subscription.id,
          ...(shard === 'DB' ? {} : { shard }),
        },
      ]);
      messages.push(...answer.messages);
    }

    const result = await runQueue(
      DELIVERIES_QUEUE,
      messages.map((body) => ({ body })),
      overrides,
    );
    expect(result.retryMessages).toEqual([]);
    expect((await receivedIds(sub.key)).sort()).toEqual(placed.map(({ id }) => id).sort());
    for (const { id, shard } of placed) {
      expect(await deliveriesIn(shard, id)).toMatchObject([{ status: 'delivered', attempts: 1 }]);
      const attempts = await database(shard)
        .prepare(
          'SELECT COUNT(*) AS n FROM delivery_attempts AS a JOIN deliveries AS d ON d.id = a.delivery_id WHERE d.event_id = ?1',
        )
        .bind(id)
        .first<{ n: number }>();
      expect(attempts?.n).toBe(1);
    }
    const health = await outboxOf(sub.subscription.id).attemptCounts(Date.now());
    expect(health).toEqual({ succeeded: placed.length, failed: 0 });
  });

  it('should answer a copy as a duplicate in whichever shard it is, and enqueue nothing', async () => {
    const type = `test_${crypto.randomUUID()}`;
    await createReceiverSubscription({ eventTypes: [type] });
    for (const shard of SHARDS) {
      const id = await eventIdIn(shard);
      expect((await ingest(THREE_SHARDS_SETTING, id, type)).body.duplicate).toBe(false);
      const copy = await ingest(THREE_SHARDS_SETTING, id, type);
      expect(copy).toMatchObject({ status: 200, body: { duplicate: true }, messages: [] });
      expect(await holdersOf(id)).toEqual([shard]);
      expect(await deliveriesIn(shard, id)).toHaveLength(1);
    }
  });

  it('should fan out only to the enabled subscriptions of DB that match, on every shard', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const matching = await createReceiverSubscription({ eventTypes: [type] });
    const otherType = await createReceiverSubscription({ eventTypes: [`other_${type}`] });
    const disabled = await createReceiverSubscription({ eventTypes: [type], enabled: false });
    const every = await createReceiverSubscription({ eventTypes: null });
    for (const shard of SHARDS.slice(1)) {
      const id = await eventIdIn(shard);
      await ingest(THREE_SHARDS_SETTING, id, type);
      const targets = new Set((await deliveriesIn(shard, id)).map((d) => d.subscription_id));
      // `every` takes every type (other files' subscriptions to every type may be there too).
      expect(targets.has(matching.subscription.id)).toBe(true);
      expect(targets.has(every.subscription.id)).toBe(true);
      expect(targets.has(otherType.subscription.id)).toBe(false);
      expect(targets.has(disabled.subscription.id)).toBe(false);
    }
  });

  it('should hold a later event of a reference for an earlier one stored in another shard', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await createReceiverSubscription({ eventTypes: [type], query: { status: '204' } });
    await env.DB.prepare('UPDATE subscriptions SET ordered = 1 WHERE id = ?1')
      .bind(sub.subscription.id)
      .run();
    const reference = `ref_${crypto.randomUUID()}`;
    const earlierId = await eventIdIn('DB_SHARD_1');
    const laterId = await eventIdIn('DB_SHARD_2');
    const earlier = await ingest(
      THREE_SHARDS_SETTING,
      earlierId,
      type,
      { reference },
      '2030-01-01T00:00:00.000Z',
    );
    const later = await ingest(
      THREE_SHARDS_SETTING,
      laterId,
      type,
      { reference },
      '2030-01-01T00:00:05.000Z',
    );

    // The later event's message comes first: held, since the earlier one is pending elsewhere.
    await runQueue(
      DELIVERIES_QUEUE,
      later.messages.map((body) => ({ body })),
      overrides,
    );
    expect(await receivedIds(sub.key)).toEqual([]);
    const [held] = await heldDeliveries(outboxOf(sub.subscription.id));
    expect(held).toMatchObject({ delivery_id: later.messages[0]?.deliveryId });

    await runQueue(
      DELIVERIES_QUEUE,
      earlier.messages.map((body) => ({ body })),
      overrides,
    );
    expect(await receivedIds(sub.key)).toEqual([earlierId, laterId]);
  });

  it('should dead-letter a delivery in the shard its message names', async () => {
    const type = `test_${crypto.randomUUID()}`;
    await createReceiverSubscription({ eventTypes: [type] });
    const id = await eventIdIn('DB_SHARD_2');
    const { messages } = await ingest(THREE_SHARDS_SETTING, id, type);
    const result = await runQueue(
      DELIVERIES_DEAD_LETTER_QUEUE,
      messages.map((body) => ({ body })),
      overrides,
    );
    expect(result.explicitAcks).toHaveLength(1);
    const [message] = messages;
    expect(message?.shard).toBe('DB_SHARD_2');
    const shard = shardOfMessage(env, message);
    expect(await findDelivery(shard.db, message?.deliveryId ?? '')).toMatchObject({
      status: 'failed',
    });
  });

  it('should raise the backlog for the oldest due delivery of any shard, counting them all', async () => {
    // Only this test's deliveries are due: the earlier tests' are settled.
    for (const shard of SHARDS) {
      await database(shard)
        .prepare(`UPDATE deliveries SET status = 'failed' WHERE status = 'pending'`)
        .run();
    }
    const type = `test_${crypto.randomUUID()}`;
    await createReceiverSubscription({ eventTypes: [type] });
    // An hour window no other test raises a backlog in.
    const now = Date.UTC(2033, 5, 1, 10);
    const due = [
      { shard: 'DB_SHARD_2', since: now - 7_200_000 },
      { shard: 'DB_SHARD_1', since: now - 3_600_000 },
    ] as const;
    const ids: string[] = [];
    for (const { shard, since } of due) {
      const id = await eventIdIn(shard);
      const { messages } = await ingest(THREE_SHARDS_SETTING, id, type);
      await database(shard)
        .prepare('UPDATE deliveries SET created_at = ?2, next_attempt_at = ?2 WHERE id = ?1')
        .bind(messages[0]?.deliveryId, since)
        .run();
      ids.push(id);
    }
    const raised = await announceBacklog({ ...env, ...overrides } as Env, now, 60);
    expect(raised?.stored).toBe(true);
    const [holder] = await holdersOf(raised?.eventId ?? '');
    const event = await findWebhookEvent(database(holder ?? 'DB'), raised?.eventId ?? '');
    const body = JSON.parse(event?.rawBody ?? '{}') as { data: Record<string, unknown> };
    expect(body.data).toMatchObject({ oldest_event_id: ids[0], due_deliveries: 2 });
  });
});
