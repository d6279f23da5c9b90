/**
 * The relay sweeper through the Worker's `scheduled` handler, with the
 * real D1 and the real `DELIVERIES` queue of miniflare. The queue is wrapped: every
 * `sendBatch` is recorded and then passed to the real producer.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { SWEEP_GRACE_MS, sweepRelay } from '../../../worker/relay/sweeper.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
  storeDelivery,
} from './delivery-helpers.ts';

const logs = useCapturedLogs();
afterEach(disableTestSubscriptions);

const DAY_MS = 86_400_000;

/** The real `DELIVERIES` producer, each `sendBatch` recorded before it is forwarded. */
function wrappedQueue(): { queue: Queue; sent: unknown[] } {
  const sent: unknown[] = [];
  const real = env.DELIVERIES;
  const queue: Queue = {
    metrics: () => real.metrics(),
    send: (body, options) => {
      sent.push(body);
      return real.send(body, options);
    },
    sendBatch: (messages, options) => {
      sent.push(...[...messages].map((message) => message.body));
      return real.sendBatch(messages, options);
    },
  };
  return { queue, sent };
}

/** Runs the Worker's `scheduled` handler at `scheduledTime` and waits for it. */
async function runCron(scheduledTime: number, overrides: Partial<Env>): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime, cron: '*/15 * * * *' }),
    { ...env, ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** Moves an event's receive time and its deliveries' times back to `at`. */
async function backdate(eventId: string, at: number): Promise<void> {
  await env.DB.batch([
    env.DB.prepare('UPDATE webhook_events SET received_at = ?2 WHERE event_id = ?1').bind(
      eventId,
      at,
    ),
    env.DB.prepare(
      'UPDATE deliveries SET created_at = ?2, updated_at = ?2, next_attempt_at = ?2 WHERE event_id = ?1',
    ).bind(eventId, at),
  ]);
}

async function attemptCount(deliveryId: string): Promise<number> {
  const row = await env.DB.prepare(
    'SELECT COUNT(*) AS n FROM delivery_attempts WHERE delivery_id = ?1',
  )
    .bind(deliveryId)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

describe('sweeper', () => {
  describe('scheduled', () => {
    it('should re-enqueue a delivery stored but never enqueued (crash after the D1 write)', async () => {
      // storeDelivery writes the event and its delivery like the ingress, without sendBatch.
      const stored = await storeDelivery();
      const { queue, sent } = wrappedQueue();
      const now = Date.now() + SWEEP_GRACE_MS + 1000;
      await runCron(now, { DELIVERIES: queue });
      expect(sent).toContainEqual({
        deliveryId: stored.deliveryId,
        subscriptionId: stored.subscription.id,
      });
      expect((await findDelivery(env.DB, stored.deliveryId))?.nextAttemptAt).toBe(now);
      expect(logs.lines()).toContainEqual(expect.objectContaining({ event: 'relay_swept' }));
      // What the consumer does with the message that was sent: the subscriber gets it.
      const result = await runQueue(DELIVERIES_QUEUE, [{ body: sent.find(isOurs(stored)) }]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      const received = await receivedUnder(stored.key);
      expect(received).toHaveLength(1);
      expect(received[0]?.body).toBe(stored.rawBody);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('delivered');
    });

    it('should not re-enqueue a pending delivery within the grace period', async () => {
      const stored = await storeDelivery();
      const { queue, sent } = wrappedQueue();
      await runCron(Date.now() + SWEEP_GRACE_MS - 60_000, { DELIVERIES: queue });
      expect(sent).not.toContainEqual({
        deliveryId: stored.deliveryId,
        subscriptionId: stored.subscription.id,
      });
    });

    it('should re-enqueue a swept delivery only once per grace period', async () => {
      const stored = await storeDelivery();
      const { queue, sent } = wrappedQueue();
      const now = Date.now() + SWEEP_GRACE_MS + 1000;
      await runCron(now, { DELIVERIES: queue });
      await runCron(now + 60_000, { DELIVERIES: queue });
      expect(sent.filter(isOurs(stored))).toHaveLength(1);
    });

    it('should not re-enqueue delivered or failed deliveries', async () => {
      const delivered = await storeDelivery();
      const failed = await storeDelivery();
      await env.DB.batch([
        env.DB.prepare(
          "UPDATE deliveries SET status = 'delivered', next_attempt_at = NULL WHERE id = ?1",
        ).bind(delivered.deliveryId),
        env.DB.prepare("UPDATE deliveries SET status = 'failed' WHERE id = ?1").bind(
          failed.deliveryId,
        ),
      ]);
      const { queue, sent } = wrappedQueue();
      await runCron(Date.now() + SWEEP_GRACE_MS + 1000, { DELIVERIES: queue });
      expect(sent).not.toContainEqual({
        deliveryId: delivered.deliveryId,
        subscriptionId: delivered.subscription.id,
      });
      expect(sent).not.toContainEqual({
        deliveryId: failed.deliveryId,
        subscriptionId: failed.subscription.id,
      });
    });

    it('should purge events past retention with their deliveries and attempts', async () => {
      const now = Date.now();
      const old = await storeDelivery();
      const recent = await storeDelivery();
      await env.DB.prepare(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, status, latency_ms)
         VALUES (?1, 1, ?2, 500, 10)`,
      )
        .bind(old.deliveryId, now)
        .run();
      await backdate(old.eventId, now - 31 * DAY_MS);
      await backdate(recent.eventId, now - 29 * DAY_MS);
      // Settle both so the purge test does not depend on the re-enqueue path.
      await env.DB.prepare("UPDATE deliveries SET status = 'delivered' WHERE id IN (?1, ?2)")
        .bind(old.deliveryId, recent.deliveryId)
        .run();
      const { queue } = wrappedQueue();
      await runCron(now, { DELIVERIES: queue, RELAY_RETENTION_DAYS: '30' });
      expect(await findWebhookEvent(env.DB, old.eventId)).toBeUndefined();
      expect(await findDelivery(env.DB, old.deliveryId)).toBeUndefined();
      expect(await attemptCount(old.deliveryId)).toBe(0);
      expect(await findWebhookEvent(env.DB, recent.eventId)).toBeDefined();
      expect(await findDelivery(env.DB, recent.deliveryId)).toBeDefined();
    });
  });

  describe('sweepRelay', () => {
    it('should report what it re-enqueued and purged', async () => {
      const stored = await storeDelivery();
      const { queue, sent } = wrappedQueue();
      const result = await sweepRelay(
        { ...env, DELIVERIES: queue },
        Date.now() + SWEEP_GRACE_MS + 1000,
        30,
        0,
      );
      expect(result.requeued).toBe(sent.length);
      expect(sent).toContainEqual({
        deliveryId: stored.deliveryId,
        subscriptionId: stored.subscription.id,
      });
    });
  });
});

function isOurs(stored: { deliveryId: string }): (body: unknown) => boolean {
  return (body) =>
    typeof body === 'object' &&
    body !== null &&
    (body as { deliveryId?: unknown }).deliveryId === stored.deliveryId;
}
