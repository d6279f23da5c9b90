/**
 * One event and one delivery over three event shards (D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2),
 * through the real Worker and real D1: `GET /admin/events/:id` reads the event, its
 * deliveries, attempts and forced replays from the shard holding it; a replay writes its
 * deliveries (and a forced replay's record) there, checks the subscriptions of `DB` through
 * their snapshot, and names the shard in each message; a retry finds its delivery in
 * whichever shard holds it. `DELIVERIES` is a recording stand-in, so each message is read
 * as sent.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { errorBody, fetchGateway, useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
} from '../relay/delivery-helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import { eventIdIn, THREE_SHARDS } from '../shard-databases.ts';
import { deliveryIn, failDeliveryIn, storeShardedEvent } from './sharded-events.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

interface EventDetail {
  event_id: string;
  deliveries: {
    id: string;
    subscription_id: string;
    status: string;
    attempt_log: { attempt: number; status: number | null; response_excerpt: string | null }[];
  }[];
  forced_replays: { by: string; from: string }[];
}

/** Every message body a recording queue was sent, in order. */
function bodiesOf(batches: readonly MessageSendRequest[][]): Record<string, unknown>[] {
  return batches.flat().map((message) => message.body as Record<string, unknown>);
}

function replay(eventId: string, json: unknown, overrides: Partial<Env>): Promise<Response> {
  return fetchGateway(
    adminRequest('POST', `/admin/events/${encodeURIComponent(eventId)}/replay`, {
      ...(json === undefined ? {} : { json }),
    }),
    { ...THREE_SHARDS, ...overrides },
  );
}

describe('GET /admin/events/:id over three shards', () => {
  it('should show the deliveries, attempts and forced replays of an event in DB_SHARD_2', async () => {
    const type = `detail_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
    const stored = await storeShardedEvent(type, { eventId: await eventIdIn('DB_SHARD_2') });
    const [deliveryId] = stored.deliveryIds;
    if (deliveryId === undefined) throw new Error('the fan-out wrote no delivery');
    await failDeliveryIn('DB_SHARD_2', deliveryId, Date.now());
    await env.DB_SHARD_2.prepare(
      `INSERT INTO event_forced_replays (event_id, forced_at, forced_by, forced_from)
       VALUES (?1, ?2, 'ada@ops', '203.0.113.7')`,
    )
      .bind(stored.eventId, Date.now())
      .run();

    const res = await fetchGateway(
      adminRequest('GET', `/admin/events/${stored.eventId}`),
      THREE_SHARDS,
    );

    expect(res.status).toBe(200);
    const data = await dataOf<EventDetail>(res);
    expect(data.event_id).toBe(stored.eventId);
    expect(data.deliveries).toEqual([
      expect.objectContaining({
        id: deliveryId,
        subscription_id: subscription.id,
        status: 'failed',
        attempt_log: [
          expect.objectContaining({ attempt: 1, status: 503, response_excerpt: 'down' }),
        ],
      }),
    ]);
    expect(data.forced_replays).toEqual([
      expect.objectContaining({ by: 'ada@ops', from: '203.0.113.7' }),
    ]);
  });
});

describe('POST /admin/events/:id/replay over three shards', () => {
  it('should reset and add the deliveries in DB_SHARD_2, skip a disabled subscription, name the shard and be delivered', async () => {
    const type = `replay_${crypto.randomUUID()}`;
    const early = await createReceiverSubscription({ eventTypes: [type] });
    const stored = await storeShardedEvent(type, { eventId: await eventIdIn('DB_SHARD_2') });
    const [existing] = stored.deliveryIds;
    if (existing === undefined) throw new Error('the fan-out wrote no delivery');
    await failDeliveryIn('DB_SHARD_2', existing, Date.now() - 60_000);
    const late = await createReceiverSubscription({ eventTypes: ['unrelated', type] });
    const disabled = await createReceiverSubscription({ eventTypes: [type], enabled: false });
    const { queue, batches } = recordingQueue();

    const res = await replay(stored.eventId, { operator: 'ada@ops' }, { DELIVERIES: queue });

    expect(res.status).toBe(202);
    const data = await dataOf<{
      delivery_ids: string[];
      skipped_subscriptions: { subscription_id: string }[];
    }>(res);
    expect(data.skipped_subscriptions.map((s) => s.subscription_id)).toEqual([
      disabled.subscription.id,
    ]);
    const { results: rows } = await env.DB_SHARD_2.prepare(
      'SELECT id, subscription_id, status FROM deliveries WHERE event_id = ?1',
    )
      .bind(stored.eventId)
      .all<{ id: string; subscription_id: string; status: string }>();
    expect(rows.map((row) => row.subscription_id).sort()).toEqual(
      [early.subscription.id, late.subscription.id].sort(),
    );
    expect(rows.every((row) => row.status === 'pending')).toBe(true);
    expect([...data.delivery_ids].sort()).toEqual(rows.map((row) => row.id).sort());
    expect(data.delivery_ids).toContain(existing);
    const bodies = bodiesOf(batches);
    expect(bodies.map((body) => body.deliveryId).sort()).toEqual([...data.delivery_ids].sort());
    for (const body of bodies) {
      expect(body).toMatchObject({ shard: 'DB_SHARD_2', trigger: 'replay', operator: 'ada@ops' });
    }
    // Nothing of it was written in DB.
    const inMain = await env.DB.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?1')
      .bind(stored.eventId)
      .first<{ n: number }>();
    expect(inMain?.n).toBe(0);
    // The consumer finds each delivery in the shard its message names and sends it.
    await runQueue(
      DELIVERIES_QUEUE,
      bodies.map((body) => ({ body })),
      THREE_SHARDS,
    );
    for (const { key } of [early, late]) {
      const received = await receivedUnder(key);
      expect(received.map((request) => JSON.parse(request.body).event_id)).toEqual([
        stored.eventId,
      ]);
    }
    const attempts = await env.DB_SHARD_2.prepare(
      'SELECT attempt, trigger, operator FROM delivery_attempts WHERE delivery_id = ?1',
    )
      .bind(existing)
      .all();
    expect(attempts.results).toEqual([
      { attempt: 1, trigger: 'schedule', operator: null },
      { attempt: 2, trigger: 'replay', operator: 'ada@ops' },
    ]);
  });

  it('should record a forced replay of an unconfirmed event in DB_SHARD_1, its shard', async () => {
    const type = `forced_${crypto.randomUUID()}`;
    const stored = await storeShardedEvent(type, {
      eventId: await eventIdIn('DB_SHARD_1'),
      status: 'unconfirmed',
    });
    await createReceiverSubscription({ eventTypes: [type] });
    const { queue, batches } = recordingQueue();
    const refused = await replay(stored.eventId, undefined, { DELIVERIES: queue });
    expect(refused.status).toBe(409);
    expect((await errorBody(refused)).code).toBe('event_unconfirmed');

    const forced = await replay(
      stored.eventId,
      { force: true, operator: 'bola@ops' },
      {
        DELIVERIES: queue,
      },
    );

    expect(forced.status).toBe(202);
    const row = await env.DB_SHARD_1.prepare(
      'SELECT forced_by FROM event_forced_replays WHERE event_id = ?1',
    )
      .bind(stored.eventId)
      .first<{ forced_by: string }>();
    expect(row?.forced_by).toBe('bola@ops');
    expect(bodiesOf(batches)).toEqual([
      expect.objectContaining({ shard: 'DB_SHARD_1', trigger: 'replay' }),
    ]);
  });
});

describe('POST /admin/deliveries/:id/retry over three shards', () => {
  it('should reset a failed delivery of DB_SHARD_1 where it is, name the shard, and 404 one no shard holds', async () => {
    const type = `retry_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
    const stored = await storeShardedEvent(type, { eventId: await eventIdIn('DB_SHARD_1') });
    const [deliveryId] = stored.deliveryIds;
    if (deliveryId === undefined) throw new Error('the fan-out wrote no delivery');
    await failDeliveryIn('DB_SHARD_1', deliveryId, Date.now() - 60_000);
    const { queue, batches } = recordingQueue();

    const res = await fetchGateway(
      adminRequest('POST', `/admin/deliveries/${deliveryId}/retry`, {
        json: { operator: 'ada@ops' },
      }),
      { ...THREE_SHARDS, DELIVERIES: queue },
    );

    expect(res.status).toBe(202);
    const data = await dataOf<{ id: string; status: string; attempts: number }>(res);
    expect(data).toMatchObject({ id: deliveryId, status: 'pending', attempts: 1 });
    expect((await deliveryIn('DB_SHARD_1', deliveryId))?.status).toBe('pending');
    expect(bodiesOf(batches)).toEqual([
      {
        deliveryId,
        subscriptionId: subscription.id,
        shard: 'DB_SHARD_1',
        trigger: 'retry',
        operator: 'ada@ops',
        requestedAt: expect.any(Number),
      },
    ]);
    const missing = await fetchGateway(
      adminRequest('POST', `/admin/deliveries/dlv_missing_${crypto.randomUUID()}/retry`),
      THREE_SHARDS,
    );
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).code).toBe('not_found');
  });

  it('should refuse (409) the retry of a delivery of DB_SHARD_2 whose subscription is disabled', async () => {
    const type = `retry_disabled_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
    const stored = await storeShardedEvent(type, { eventId: await eventIdIn('DB_SHARD_2') });
    const [deliveryId] = stored.deliveryIds;
    if (deliveryId === undefined) throw new Error('the fan-out wrote no delivery');
    await failDeliveryIn('DB_SHARD_2', deliveryId, Date.now());
    await env.DB.prepare(
      "UPDATE subscriptions SET enabled = 0, disabled_at = ?2, health_reason = 'too many failures' WHERE id = ?1",
    )
      .bind(subscription.id, Date.now())
      .run();
    const { queue, batches } = recordingQueue();

    const res = await fetchGateway(adminRequest('POST', `/admin/deliveries/${deliveryId}/retry`), {
      ...THREE_SHARDS,
      DELIVERIES: queue,
    });

    expect(res.status).toBe(409);
    const error = await errorBody(res);
    expect(error.code).toBe('subscription_disabled');
    expect(error.message).toContain('too many failures');
    expect((await deliveryIn('DB_SHARD_2', deliveryId))?.status).toBe('failed');
    expect(batches).toEqual([]);
  });
});
