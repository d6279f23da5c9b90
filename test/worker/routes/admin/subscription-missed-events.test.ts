/**
 * Events that arrive while a subscription is disabled make no delivery for it. Enabling it
 * again says how many it missed, and with `requeue_pending` a recovery job of kind
 * `missed_events` writes and enqueues their deliveries page by page: through the admin API,
 * the real D1, the real Worker's `queue` handler and the recording receiver.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERIES_QUEUE } from '../../../../worker/relay/consumer.ts';
import { RECOVERY_PAGE_SIZE } from '../../../../worker/relay/recover.ts';
import { fetchGateway, useCapturedLogs } from '../../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
  storeEvent,
} from '../../relay/delivery-helpers.ts';
import { recoveryJob } from '../../relay/recovery-helpers.ts';
import { adminRequest, dataOf } from './admin-helpers.ts';

const HOUR_MS = 3_600_000;

useCapturedLogs();
afterEach(disableTestSubscriptions);

function patch(id: string, json: unknown, queue: Queue) {
  return fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }), {
    DELIVERIES: queue,
  });
}

/** The bodies sent to a recording producer: delivery messages and recovery steps. */
function sentBodies(batches: MessageSendRequest[][]) {
  const bodies = batches.flat().map((m) => m.body as Record<string, unknown>);
  return {
    deliveries: bodies.filter((b) => typeof b.deliveryId === 'string'),
    steps: bodies.filter((b) => b.kind === 'recover'),
  };
}

/** Deliveries of these events to the subscription, as stored. */
async function deliveriesTo(subscriptionId: string, eventIds: readonly string[]) {
  const { results } = await env.DB.prepare(
    `SELECT event_id FROM deliveries
     WHERE subscription_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))`,
  )
    .bind(subscriptionId, JSON.stringify(eventIds))
    .all<{ event_id: string }>();
  return results.map((row) => row.event_id);
}

/** A subscription to a fresh type, disabled by an operator through the API. */
async function disabledSubscription() {
  const eventType = `missed_${crypto.randomUUID()}`;
  const target = await createReceiverSubscription({ eventTypes: [eventType] });
  const off = await patch(target.subscription.id, { enabled: false }, recordingQueue().queue);
  expect(off.status).toBe(200);
  return { ...target, eventType };
}

describe('PATCH /admin/subscriptions/:id re-enabling', () => {
  it('should deliver the events received while it was disabled, over more than one page, exactly once', async () => {
    const { subscription, key, eventType } = await disabledSubscription();
    const missed: string[] = [];
    for (let i = 0; i < RECOVERY_PAGE_SIZE + 4; i += 1) {
      const stored = await storeEvent(eventType);
      expect(stored.deliveryIds).toEqual([]);
      missed.push(stored.eventId);
    }
    // A money event received before the disable and confirmed by a re-check while it was
    // disabled: its fan-out fell in the disable too.
    const confirmedLate = await storeEvent(eventType, {
      status: 'confirmed',
      receivedAt: Date.now() - 2 * HOUR_MS,
    });
    await env.DB.prepare(
      'UPDATE webhook_events SET confirmation_checked_at = ?2, confirmation_checks = 2 WHERE event_id = ?1',
    )
      .bind(confirmedLate.eventId, Date.now())
      .run();
    missed.push(confirmedLate.eventId);
    // Not missed: one still awaiting confirmation (it fans out when confirmed), one received
    // and fanned out before the disable, one of another type.
    const notMissed = [
      await storeEvent(eventType, { status: 'awaiting_confirmation' }),
      await storeEvent(eventType, { receivedAt: Date.now() - HOUR_MS }),
      await storeEvent(`other_${crypto.randomUUID()}`),
    ].map((stored) => stored.eventId);

    const start = recordingQueue();
    const res = await patch(subscription.id, { enabled: true, requeue_pending: true }, start.queue);
    expect(res.status).toBe(200);
    const data = await dataOf<Record<string, unknown>>(res);
    expect(data.missed_events).toEqual({ count: missed.length, capped: false });
    expect(data.recovery_job).toMatchObject({
      kind: 'missed_events',
      state: 'running',
      filter: { subscription_id: subscription.id },
    });
    const jobId = (data.recovery_job as { id: string }).id;
    const [first] = sentBodies(start.batches).steps;
    expect(first).toEqual({ kind: 'recover', jobId, page: 0 });

    // The job's pages, each through the real queue handler, the first one twice (a
    // redelivered message writes and sends nothing).
    const sent: Record<string, unknown>[] = [];
    let steps: unknown[] = [first, first];
    for (let round = 0; round < 5 && steps.length > 0; round += 1) {
      const recording = recordingQueue();
      for (const body of steps) {
        await runQueue(DELIVERIES_QUEUE, [{ body }], { DELIVERIES: recording.queue });
      }
      const out = sentBodies(recording.batches);
      sent.push(...out.deliveries);
      steps = out.steps.filter(
        (step, index, all) => all.findIndex((s) => s.page === step.page) === index,
      );
    }
    expect(await recoveryJob(jobId)).toMatchObject({
      state: 'done',
      pages: 2,
      matched: missed.length,
      enqueued: missed.length,
    });
    expect(sent).toHaveLength(missed.length);
    expect(sent[0]).toMatchObject({ trigger: 'recover' });
    expect((await deliveriesTo(subscription.id, missed)).sort()).toEqual([...missed].sort());
    expect(await deliveriesTo(subscription.id, notMissed)).toEqual([]);

    // The subscriber gets each missed event once.
    await runQueue(
      DELIVERIES_QUEUE,
      sent.map((body) => ({ body })),
    );
    const received = (await receivedUnder(key)).map(
      (r) => (JSON.parse(r.body) as { event_id: string }).event_id,
    );
    expect(received.sort()).toEqual([...missed].sort());
  }, 60_000);

  it('should say how many events it missed and send nothing without requeue_pending', async () => {
    const { subscription, eventType } = await disabledSubscription();
    const missed = [(await storeEvent(eventType)).eventId, (await storeEvent(eventType)).eventId];

    const { queue, batches } = recordingQueue();
    const res = await patch(subscription.id, { enabled: true }, queue);

    expect(res.status).toBe(200);
    const data = await dataOf<Record<string, unknown>>(res);
    expect(data.missed_events).toEqual({ count: 2, capped: false });
    expect(data).not.toHaveProperty('recovery_job');
    expect(data).not.toHaveProperty('requeued');
    expect(batches).toEqual([]);
    expect(await deliveriesTo(subscription.id, missed)).toEqual([]);
  });

  it('should start no job when nothing was missed', async () => {
    const { subscription } = await disabledSubscription();
    await storeEvent(`other_${crypto.randomUUID()}`);

    const { queue, batches } = recordingQueue();
    const res = await patch(subscription.id, { enabled: true, requeue_pending: true }, queue);

    const data = await dataOf<Record<string, unknown>>(res);
    expect(data).toMatchObject({
      requeued: 0,
      missed_events: { count: 0, capped: false },
      recovery_job: null,
    });
    expect(batches).toEqual([]);
  });
});
