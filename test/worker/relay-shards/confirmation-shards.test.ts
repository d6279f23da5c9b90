/**
 * Deferred confirmation of money events stored in a shard other than `DB`
 * (`D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2`), through the Worker's real queue and scheduled
 * handlers, the three real D1 databases and the confirm sandbox over HTTP: a re-check
 * message names its event's shard, the check settles the event there and fans it out there
 * to the subscriptions of `DB`, its deliveries and next check are enqueued naming the shard,
 * and a message that names no shard means `DB`.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { SWEEP_GRACE_MS } from '../../../worker/relay/sweeper.ts';
import { useCapturedLogs } from '../helpers.ts';
import { control, emitted, sandboxClient } from '../relay/confirmation-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
} from '../relay/delivery-helpers.ts';
import { eventIdIn, type ShardName, THREE_SHARDS } from '../shard-databases.ts';
import { deliveriesIn, eventIn, storeIn } from './shard-events.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** Three shards, confirmation on against the confirm sandbox, `queue` as `DELIVERIES`. */
const confirmOnShards = (queue: Queue): Partial<Env> => ({
  ...THREE_SHARDS,
  CONFIRM_MONEY_EVENTS: 'true',
  UPSTREAM_BASE_URL: inject('confirmSandboxUrl'),
  DELIVERIES: queue,
});

/** The body of a `charge_success` for a payment the sandbox has completed, under `eventId`. */
async function succeededCharge(eventId: string, reference?: string): Promise<string> {
  const paid = `cs_pay_${crypto.randomUUID()}`;
  await sandboxClient().payments.initialize({
    email: 'buyer@example.com',
    amount: '2500.00',
    currency: 'NGN',
    reference: paid,
  });
  await control(`payments/${paid}/complete`, { outcome: 'success' });
  const envelope = await emitted('charge_success', paid);
  // The id decides the shard; a reference of no payment leaves the event unconfirmable yet.
  const data = reference === undefined ? envelope.data : { ...envelope.data, reference };
  return JSON.stringify({ ...envelope, event_id: eventId, data });
}

/** Stores a `charge_success` awaiting its second check in `shard`; returns its id. */
async function awaitingIn(shard: ShardName, rawBody: (id: string) => Promise<string>) {
  const eventId = await eventIdIn(shard, 'evt_shard_');
  const now = Date.now();
  await storeIn(shard, {
    eventId,
    eventType: 'charge_success',
    receivedAt: now,
    status: 'awaiting_confirmation',
    confirmation: {
      reason: 'status processing',
      checks: 1,
      checkedAt: now,
      nextCheckAt: now + 10_000,
    },
    rawBody: await rawBody(eventId),
  });
  return eventId;
}

/** Runs `bodies` through the Worker's queue handler with three shards; returns what it sent. */
async function consume(bodies: readonly unknown[]): Promise<MessageSendRequest[]> {
  const recorder = recordingQueue();
  const result = await runQueue(
    DELIVERIES_QUEUE,
    bodies.map((body) => ({ body })),
    confirmOnShards(recorder.queue),
  );
  expect(result.retryMessages).toEqual([]);
  return recorder.batches.flat();
}

describe('confirmation over event shards', () => {
  it('should confirm an event of DB_SHARD_1 by the re-check its message names, fan it out there to the subscriptions of DB, and deliver it', async () => {
    const { subscription, key } = await createReceiverSubscription({
      eventTypes: ['charge_success'],
    });
    const eventId = await awaitingIn('DB_SHARD_1', (id) => succeededCharge(id));

    // A message that names no shard means DB, where the event is not: nothing happens.
    expect(await consume([{ kind: 'confirm', eventId, check: 1 }])).toEqual([]);
    expect((await eventIn('DB_SHARD_1', eventId))?.status).toBe('awaiting_confirmation');

    const sent = await consume([{ kind: 'confirm', eventId, check: 1, shard: 'DB_SHARD_1' }]);

    const event = await eventIn('DB_SHARD_1', eventId);
    expect(event?.status).toBe('confirmed');
    expect(event?.confirmation?.checks).toBe(2);
    expect(await eventIn('DB', eventId)).toBeUndefined();
    expect(await deliveriesIn('DB', eventId)).toEqual([]);
    const deliveries = await deliveriesIn('DB_SHARD_1', eventId);
    const ours = deliveries.filter((d) => d.subscriptionId === subscription.id);
    expect(ours).toHaveLength(1);
    const message = {
      deliveryId: ours[0]?.id,
      subscriptionId: subscription.id,
      shard: 'DB_SHARD_1',
    };
    expect(sent.map((m) => m.body)).toContainEqual(message);

    await runQueue(DELIVERIES_QUEUE, [{ body: message }], THREE_SHARDS);
    const received = await receivedUnder(key);
    expect(received.map((r) => (JSON.parse(r.body) as { event_id: string }).event_id)).toEqual([
      eventId,
    ]);
  });

  it('should send the next check of an event still awaiting naming its shard', async () => {
    const eventId = await awaitingIn('DB_SHARD_2', (id) =>
      succeededCharge(id, `cs_missing_${crypto.randomUUID()}`),
    );

    const sent = await consume([{ kind: 'confirm', eventId, check: 1, shard: 'DB_SHARD_2' }]);

    const event = await eventIn('DB_SHARD_2', eventId);
    expect(event?.status).toBe('awaiting_confirmation');
    expect(event?.confirmation?.checks).toBe(2);
    expect(sent).toEqual([
      { body: { kind: 'confirm', eventId, check: 2, shard: 'DB_SHARD_2' }, delaySeconds: 60 },
    ]);
  });

  it("should start an overdue check from the sweeper with its event's shard, and settle it there", async () => {
    const { subscription } = await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const eventId = await awaitingIn('DB_SHARD_2', (id) => succeededCharge(id));
    const recorder = recordingQueue();
    const ctx = createExecutionContext();
    const now = Date.now() + 10_000 + SWEEP_GRACE_MS + 1000;
    await worker.scheduled(
      createScheduledController({ scheduledTime: now, cron: '*/15 * * * *' }),
      { ...env, ...confirmOnShards(recorder.queue) },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const check = { kind: 'confirm', eventId, check: 1, shard: 'DB_SHARD_2' };
    expect(recorder.batches.flat().map((m) => m.body)).toContainEqual(check);
    expect((await eventIn('DB_SHARD_2', eventId))?.confirmation?.nextCheckAt).toBe(now);

    await consume([check]);

    expect((await eventIn('DB_SHARD_2', eventId))?.status).toBe('confirmed');
    const deliveries = await deliveriesIn('DB_SHARD_2', eventId);
    expect(deliveries.map((d) => d.subscriptionId)).toContain(subscription.id);
  });
});
