/**
 * Bulk recovery jobs on the queue: pages of a job through the real Worker's `queue`
 * handler and the real D1, first with a recording `DELIVERIES` producer (so each step's
 * messages can be counted, and a step can be run twice as a redelivered message would),
 * then end to end through the real DELIVERIES queue and its consumer.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { RECOVERY_PAGE_SIZE } from '../../../worker/relay/recover.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  type RecordingQueue,
  recordingQueue,
  runQueue,
} from './delivery-helpers.ts';
import { attemptTriggers, recoveryJob, seedDeliveries, startRecovery } from './recovery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const HOUR_MS = 3_600_000;

/** The bodies a recording producer was sent, split into delivery messages and the rest. */
function sentBodies(recording: RecordingQueue) {
  const bodies = recording.batches.flat().map((m) => m.body as Record<string, unknown>);
  return {
    deliveries: bodies.filter((b) => typeof b.deliveryId === 'string'),
    steps: bodies.filter((b) => b.kind === 'recover'),
  };
}

/** A subscription with `count` failed deliveries created an hour ago, and a job over them. */
async function jobOver(count: number) {
  const { subscription } = await createReceiverSubscription();
  const since = Date.now() - HOUR_MS;
  const ids = await seedDeliveries({
    subscriptionId: subscription.id,
    eventType: `recover_${crypto.randomUUID()}`,
    count,
    createdAt: since,
  });
  const start = recordingQueue();
  const job = await startRecovery(
    { since: new Date(since).toISOString(), subscription_id: subscription.id, operator: 'ada' },
    { DELIVERIES: start.queue },
  );
  const [first] = sentBodies(start).steps;
  expect(first).toEqual({ kind: 'recover', jobId: job.id, page: 0 });
  return { ids, job, first };
}

describe('bulk recovery', () => {
  describe('queue (edgepay-deliveries), kind recover', () => {
    it('should take one page per message, reset it, enqueue it with trigger recover and send the next page', async () => {
      const { ids, job, first } = await jobOver(RECOVERY_PAGE_SIZE + 20);
      const recording = recordingQueue();

      const result = await runQueue(DELIVERIES_QUEUE, [{ body: first }], {
        DELIVERIES: recording.queue,
      });

      expect(result.explicitAcks).toEqual(['msg-0']);
      const sent = sentBodies(recording);
      const firstPage = ids.slice(0, RECOVERY_PAGE_SIZE);
      expect(sent.deliveries.map((b) => b.deliveryId)).toEqual(firstPage);
      expect(sent.deliveries[0]).toMatchObject({ trigger: 'recover', operator: 'ada' });
      expect(sent.steps).toEqual([{ kind: 'recover', jobId: job.id, page: 1 }]);
      expect(await findDelivery(env.DB, firstPage[0] ?? '')).toMatchObject({ status: 'pending' });
      expect(await findDelivery(env.DB, ids.at(-1) ?? '')).toMatchObject({ status: 'failed' });
      expect(await recoveryJob(job.id)).toMatchObject({
        state: 'running',
        pages: 1,
        matched: RECOVERY_PAGE_SIZE,
        enqueued: RECOVERY_PAGE_SIZE,
        skipped_disabled: 0,
        finished_at: null,
      });
    });

    it('should enqueue nothing again when a page message is redelivered, only resend the next page', async () => {
      const { ids, job, first } = await jobOver(RECOVERY_PAGE_SIZE + 20);
      const recording = recordingQueue();
      const overrides = { DELIVERIES: recording.queue };

      await runQueue(DELIVERIES_QUEUE, [{ body: first }], overrides);
      // The same message again, as Queues redelivers one whose ack was lost.
      await runQueue(DELIVERIES_QUEUE, [{ body: first, attempts: 2 }], overrides);
      const next = { kind: 'recover', jobId: job.id, page: 1 };
      // The next page's message twice in one batch: only one takes the page.
      await runQueue(DELIVERIES_QUEUE, [{ body: next }, { body: next }], overrides);

      const sent = sentBodies(recording);
      expect(sent.deliveries.map((b) => b.deliveryId)).toEqual(ids);
      expect(sent.steps).toEqual([
        { kind: 'recover', jobId: job.id, page: 1 },
        { kind: 'recover', jobId: job.id, page: 1 },
      ]);
      const done = await recoveryJob(job.id);
      expect(done).toMatchObject({
        state: 'done',
        pages: 2,
        matched: ids.length,
        enqueued: ids.length,
      });
      expect(Date.parse(done.finished_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(done.started_at),
      );
    });

    it('should do nothing for a job that is no longer running', async () => {
      const { job, first } = await jobOver(3);
      await env.DB.prepare(`UPDATE recovery_jobs SET state = 'failed' WHERE id = ?1`)
        .bind(job.id)
        .run();
      const recording = recordingQueue();
      const result = await runQueue(DELIVERIES_QUEUE, [{ body: first }], {
        DELIVERIES: recording.queue,
      });
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(recording.batches).toEqual([]);
    });

    it('should retry a step the queue refuses, then fail the job with the reason', async () => {
      const { job, first } = await jobOver(RECOVERY_PAGE_SIZE + 3);
      const failing = recordingQueue(new Error('queue down'));
      const retried = await runQueue(DELIVERIES_QUEUE, [{ body: first }], {
        DELIVERIES: failing.queue,
      });
      expect(retried.retryMessages).toEqual([{ msgId: 'msg-0', delaySeconds: 5 }]);
      // The page was taken before the send failed: its deliveries wait for the sweeper.
      expect(await recoveryJob(job.id)).toMatchObject({ state: 'running', pages: 1 });
      const last = await runQueue(DELIVERIES_QUEUE, [{ body: first, attempts: 5 }], {
        DELIVERIES: failing.queue,
      });
      expect(last.explicitAcks).toEqual(['msg-0']);
      expect(await recoveryJob(job.id)).toMatchObject({
        state: 'failed',
        error: 'page 0 failed: queue down',
      });
    });
  });

  describe('through the real DELIVERIES queue', () => {
    it('should re-enqueue every matching delivery over several pages, skip disabled subscriptions and record trigger recover', async () => {
      const eventType = `recover_${crypto.randomUUID()}`;
      const since = Date.now() - HOUR_MS;
      const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
      const off = await createReceiverSubscription({ eventTypes: [eventType], enabled: false });
      const count = 2 * RECOVERY_PAGE_SIZE + 30;
      const ids = await seedDeliveries({
        subscriptionId: subscription.id,
        eventType,
        count,
        createdAt: since,
      });
      const skipped = await seedDeliveries({
        subscriptionId: off.subscription.id,
        eventType,
        count: 3,
        createdAt: since,
      });
      const [delivered] = await seedDeliveries({
        subscriptionId: subscription.id,
        eventType,
        count: 1,
        status: 'delivered',
        createdAt: since,
      });
      const [before] = await seedDeliveries({
        subscriptionId: subscription.id,
        eventType,
        count: 1,
        createdAt: since - 1,
      });

      const job = await startRecovery(
        { since: new Date(since).toISOString(), event_type: eventType },
        {},
      );
      expect(job).toMatchObject({ state: 'running', pages: 0, matched: 0, operator: null });

      await expect
        .poll(async () => (await recoveryJob(job.id)).state, { timeout: 20_000, interval: 200 })
        .toBe('done');
      expect(await recoveryJob(job.id)).toMatchObject({
        pages: 3,
        matched: count + 3,
        enqueued: count,
        skipped_disabled: 3,
        error: null,
      });
      // The test bindings refuse the loopback receiver: each recovered delivery gets one
      // recorded refusal, started by the recovery.
      await expect
        .poll(() => attemptTriggers(ids), { timeout: 30_000, interval: 250 })
        .toEqual({ 'recover/': count });
      expect(await attemptTriggers([...skipped, delivered ?? '', before ?? ''])).toEqual({});
      expect(await findDelivery(env.DB, delivered ?? '')).toMatchObject({ status: 'delivered' });
      expect(await findDelivery(env.DB, before ?? '')).toMatchObject({ status: 'failed' });
    }, 60_000);
  });
});
