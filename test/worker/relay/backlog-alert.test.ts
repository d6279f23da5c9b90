/**
 * `relay.backlog` through the Worker's real `scheduled` handler at chosen times: raised when
 * the oldest due pending delivery has waited `RELAY_BACKLOG_ALERT_SEC` (600 s by default),
 * once per hour window, delivered signed to the subscriptions that list it.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
  storeEvent,
} from './delivery-helpers.ts';

useCapturedLogs();

/** Runs the Worker's `scheduled` handler at `scheduledTime`; returns the delivery ids it enqueued. */
async function runCron(scheduledTime: number, overrides: Partial<Env> = {}): Promise<string[]> {
  const recorder = recordingQueue();
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime, cron: '*/15 * * * *' }),
    { ...env, DELIVERIES: recorder.queue, ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return recorder.batches.flat().flatMap((message) => {
    const { deliveryId } = message.body as { deliveryId?: unknown };
    return typeof deliveryId === 'string' ? [deliveryId] : [];
  });
}

/** One pending delivery, never attempted, created at `at` (epoch ms). */
async function stuckSince(at: number): Promise<void> {
  const type = `test_${crypto.randomUUID()}`;
  await createReceiverSubscription({ eventTypes: [type] });
  expect((await storeEvent(type, { receivedAt: at })).deliveryIds).toHaveLength(1);
}

const MINUTE = 60_000;
/** An hour boundary well after every row other tests of this file write. */
const HOUR = Date.UTC(2031, 0, 1, 10);

// Each test leaves no due pending delivery behind, so the next one sees only its own.
afterEach(async () => {
  await disableTestSubscriptions();
  await env.DB.prepare(`UPDATE deliveries SET status = 'failed' WHERE status = 'pending'`).run();
});

describe('relay.backlog', () => {
  it('should be raised by the cron when a delivery has waited 600 s, once per hour, signed to listeners', async () => {
    const listener = await createReceiverSubscription({ eventTypes: ['relay.backlog'] });
    const everything = await createReceiverSubscription({ eventTypes: null });
    const stuck = await storeEvent(`test_${crypto.randomUUID()}`, { receivedAt: HOUR });
    const [stuckId = ''] = stuck.deliveryIds;

    // 9 minutes after it was stored: under the threshold, nothing raised.
    await runCron(HOUR + 9 * MINUTE);
    const eventId = `relay.backlog:${new Date(HOUR).toISOString()}`;
    expect(await findWebhookEvent(env.DB, eventId)).toBe(undefined);

    // 11 minutes: raised, to the listener only.
    const sent = await runCron(HOUR + 11 * MINUTE);
    const deliveries = await listEventDeliveries(env.DB, eventId);
    expect(deliveries.map((d) => d.subscriptionId)).toEqual([listener.subscription.id]);
    const alertId = deliveries[0]?.id ?? '';
    expect(sent).toContain(alertId);
    await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: alertId } }]);
    const [request] = await receivedUnder(listener.key);
    if (request === undefined) throw new Error('the listener got nothing');
    const payload = new Webhook(listener.subscription.secret).verify(request.body, request.headers);
    expect(payload).toMatchObject({
      event_type: 'relay.backlog',
      event_id: eventId,
      timestamp: new Date(HOUR + 11 * MINUTE).toISOString(),
      data: {
        oldest_delivery_id: stuckId,
        oldest_event_id: stuck.eventId,
        oldest_subscription_id: everything.subscription.id,
        oldest_due_at: new Date(HOUR).toISOString(),
        age_seconds: 660,
        threshold_seconds: 600,
        due_deliveries: 1,
      },
    });

    // Later runs in the same hour raise nothing more; the next hour raises it again.
    await runCron(HOUR + 26 * MINUTE);
    await runCron(HOUR + 41 * MINUTE);
    expect(await listEventDeliveries(env.DB, eventId)).toHaveLength(1);
    await runCron(HOUR + 71 * MINUTE);
    const nextHour = `relay.backlog:${new Date(HOUR + 60 * MINUTE).toISOString()}`;
    expect(await findWebhookEvent(env.DB, nextHour)).toMatchObject({ eventType: 'relay.backlog' });
  });

  it('should count a never-attempted delivery from its creation, however often the sweeper resent it', async () => {
    const start = HOUR + 120 * MINUTE;
    await stuckSince(start);
    // The sweeper re-enqueues it at 11 minutes (moving its due time) but its age stays.
    await runCron(start + 11 * MINUTE, { RELAY_BACKLOG_ALERT_SEC: '3600' });
    await runCron(start + 61 * MINUTE, { RELAY_BACKLOG_ALERT_SEC: '3600' });
    const event = await findWebhookEvent(
      env.DB,
      `relay.backlog:${new Date(start + 60 * MINUTE).toISOString()}`,
    );
    expect(JSON.parse(event?.rawBody ?? '{}').data).toMatchObject({
      age_seconds: 3660,
      threshold_seconds: 3600,
    });
  });

  it('should raise nothing with RELAY_BACKLOG_ALERT_SEC=0', async () => {
    const start = HOUR + 240 * MINUTE;
    await stuckSince(start);
    await runCron(start + 30 * MINUTE, { RELAY_BACKLOG_ALERT_SEC: '0' });
    const eventId = `relay.backlog:${new Date(start).toISOString()}`;
    expect(await findWebhookEvent(env.DB, eventId)).toBe(undefined);
  });
});
