/**
 * The relay's own events over three event shards (`D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2`),
 * on the three real D1 databases: an operational event is stored in the shard its id is
 * placed in, fanned out there to the subscriptions of `DB` that list its type, enqueued
 * naming the shard, and delivered; emitted again, it is stored and sent once.
 */
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { emitOperationalEvent } from '../../../worker/relay/operational-events.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
} from '../relay/delivery-helpers.ts';
import { eventIdIn, SHARDS, THREE_SHARDS } from '../shard-databases.ts';
import { deliveriesIn, eventIn } from './shard-events.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** The data of an `event.unconfirmed` about `eventId` (its operational id: `event.unconfirmed:<eventId>`). */
const unconfirmed = (eventId: string) => ({
  event_id: eventId,
  event_type: 'charge_success',
  reference: null,
  reason: 'not confirmed after 8 checks: status processing',
  checks: 8,
  unconfirmed_at: '2026-11-27T08:00:00.000Z',
});

describe('operational events over event shards', () => {
  it('should store an operational event in its placed shard, fan it out there and deliver it', async () => {
    const listener = await createReceiverSubscription({ eventTypes: ['event.unconfirmed'] });
    // The operational id is `event.unconfirmed:<money event id>`: pick one placed in DB_SHARD_1.
    const operationalId = await eventIdIn('DB_SHARD_1', 'event.unconfirmed:evt_op_');
    const moneyEventId = operationalId.slice('event.unconfirmed:'.length);
    const recorder = recordingQueue();
    const workerEnv = { ...env, ...THREE_SHARDS, DELIVERIES: recorder.queue };

    const emitted = await emitOperationalEvent(workerEnv, {
      type: 'event.unconfirmed',
      data: unconfirmed(moneyEventId),
    });

    expect(emitted).toMatchObject({ eventId: operationalId, stored: true });
    for (const shard of SHARDS) {
      const held = await eventIn(shard, operationalId);
      expect(held?.eventId, shard).toBe(shard === 'DB_SHARD_1' ? operationalId : undefined);
    }
    const deliveries = await deliveriesIn('DB_SHARD_1', operationalId);
    expect(deliveries.map((d) => d.subscriptionId)).toContain(listener.subscription.id);
    const ours = deliveries.find((d) => d.subscriptionId === listener.subscription.id);
    const message = {
      deliveryId: ours?.id,
      subscriptionId: listener.subscription.id,
      shard: 'DB_SHARD_1',
    };
    expect(recorder.batches.flat().map((m) => m.body)).toContainEqual(message);

    await runQueue(DELIVERIES_QUEUE, [{ body: message }], THREE_SHARDS);
    const [request, ...more] = await receivedUnder(listener.key);
    expect(more).toEqual([]);
    if (request === undefined) throw new Error('the listener got nothing');
    expect(request.headers['webhook-id']).toBe(operationalId);
    const payload = new Webhook(listener.subscription.secret).verify(
      request.body,
      request.headers,
    ) as { event_type: string; data: { event_id: string } };
    expect(payload.event_type).toBe('event.unconfirmed');
    expect(payload.data.event_id).toBe(moneyEventId);
    expect((await deliveriesIn('DB_SHARD_1', operationalId))[0]?.status).toBe('delivered');

    // Emitted again (a retried emitter): found in its shard, nothing stored or sent twice.
    const again = recordingQueue();
    const repeat = await emitOperationalEvent(
      { ...workerEnv, DELIVERIES: again.queue },
      { type: 'event.unconfirmed', data: unconfirmed(moneyEventId) },
    );
    expect(repeat).toMatchObject({ eventId: operationalId, stored: false, deliveryIds: [] });
    expect(again.batches.flat()).toEqual([]);
    expect(await deliveriesIn('DB_SHARD_1', operationalId)).toHaveLength(deliveries.length);
  });
});
