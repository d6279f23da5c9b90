/**
 * The admin API's bulk recovery routes (`/admin/deliveries/recover`) through the real
 * Worker and D1: starting a job (once per filter while it runs), the preview count, a
 * job's progress, and the filters refused. `DELIVERIES` is a recording producer, so no job
 * runs past its first message here (test/worker/relay/recovery.test.ts runs them).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchGateway, useCapturedLogs } from '../../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
} from '../../relay/delivery-helpers.ts';
import {
  type RecoveryJobData,
  recoverRequest,
  recoveryJob,
  seedDeliveries,
  startRecovery,
} from '../../relay/recovery-helpers.ts';
import { adminRequest, dataOf, expectValidationFailed } from './admin-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const HOUR_MS = 3_600_000;
const SINCE = '2026-01-01T00:00:00.000Z';

/** An enabled and a disabled subscription, each with failed and pending deliveries of one type. */
async function seeded() {
  const eventType = `recover_${crypto.randomUUID()}`;
  const since = Date.now() - 2 * HOUR_MS;
  const on = await createReceiverSubscription({ eventTypes: [eventType] });
  const off = await createReceiverSubscription({ eventTypes: [eventType], enabled: false });
  const base = { eventType, createdAt: since };
  await seedDeliveries({ ...base, subscriptionId: on.subscription.id, count: 7 });
  await seedDeliveries({
    ...base,
    subscriptionId: on.subscription.id,
    count: 4,
    status: 'pending',
  });
  await seedDeliveries({
    ...base,
    subscriptionId: on.subscription.id,
    count: 5,
    status: 'delivered',
  });
  await seedDeliveries({ ...base, subscriptionId: off.subscription.id, count: 2 });
  // An hour later: outside a filter ending before it.
  await seedDeliveries({
    ...base,
    subscriptionId: on.subscription.id,
    count: 3,
    createdAt: since + HOUR_MS,
  });
  return { eventType, since, on: on.subscription.id, off: off.subscription.id };
}

async function preview(body: Record<string, unknown>) {
  const res = await fetchGateway(recoverRequest(body, true));
  expect(res.status).toBe(200);
  return dataOf<{ matched: number; skipped_disabled: number; capped: boolean }>(res);
}

describe('admin recovery API', () => {
  describe('POST /admin/deliveries/recover/preview', () => {
    it('should count the undelivered deliveries the filter matches, and those it would skip', async () => {
      const { eventType, since, on } = await seeded();
      const all = { since: new Date(since).toISOString(), event_type: eventType };
      expect(await preview(all)).toEqual({ matched: 16, skipped_disabled: 2, capped: false });
      expect(await preview({ ...all, status: 'pending' })).toEqual({
        matched: 4,
        skipped_disabled: 0,
        capped: false,
      });
      expect(
        await preview({
          ...all,
          subscription_id: on,
          until: new Date(since + HOUR_MS).toISOString(),
        }),
      ).toEqual({ matched: 11, skipped_disabled: 0, capped: false });
      expect(await preview({ ...all, since: new Date(since + HOUR_MS).toISOString() })).toEqual({
        matched: 3,
        skipped_disabled: 0,
        capped: false,
      });
    });

    it('should start nothing', async () => {
      const { eventType, since } = await seeded();
      const recording = recordingQueue();
      const res = await fetchGateway(
        recoverRequest({ since: new Date(since).toISOString(), event_type: eventType }, true),
        { DELIVERIES: recording.queue },
      );
      expect(res.status).toBe(200);
      expect(recording.batches).toEqual([]);
    });
  });

  describe('POST /admin/deliveries/recover', () => {
    it('should answer 202 with a running job and send its first page message', async () => {
      const { eventType, since } = await seeded();
      const recording = recordingQueue();
      const before = Date.now();
      const job = await startRecovery(
        { since: new Date(since).toISOString(), event_type: eventType, status: 'failed' },
        { DELIVERIES: recording.queue },
      );
      expect(job).toMatchObject({
        id: expect.stringMatching(/^rcv_/),
        state: 'running',
        filter: {
          since: new Date(since).toISOString(),
          until: null,
          subscription_id: null,
          status: 'failed',
          event_type: eventType,
        },
        operator: null,
        matched: 0,
        enqueued: 0,
        skipped_disabled: 0,
        pages: 0,
        error: null,
        finished_at: null,
      });
      expect(Date.parse(job.started_at)).toBeGreaterThanOrEqual(before);
      expect(recording.batches.flat().map((m) => m.body)).toEqual([
        { kind: 'recover', jobId: job.id, page: 0 },
      ]);
    });

    it('should answer the running job to a second call with the same filter, starting nothing', async () => {
      const { eventType, since } = await seeded();
      const recording = recordingQueue();
      const filter = { event_type: eventType, since: new Date(since).toISOString() };
      const first = await startRecovery(filter, { DELIVERIES: recording.queue });
      // Same filter, fields in another order, another operator: the same job.
      const second = await startRecovery(
        { operator: 'grace', since: filter.since, event_type: eventType },
        { DELIVERIES: recording.queue },
      );
      expect(second.id).toBe(first.id);
      expect(second.operator).toBeNull();
      expect(recording.batches.flat()).toHaveLength(1);
      const other = await startRecovery(
        { ...filter, status: 'pending' },
        { DELIVERIES: recording.queue },
      );
      expect(other.id).not.toBe(first.id);
    });

    it('should start a new job once the one with the same filter is done', async () => {
      const recording = recordingQueue();
      const filter = { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}` };
      const first = await startRecovery(filter, { DELIVERIES: recording.queue });
      await env.DB.prepare(`UPDATE recovery_jobs SET state = 'done' WHERE id = ?1`)
        .bind(first.id)
        .run();
      const second = await startRecovery(filter, { DELIVERIES: recording.queue });
      expect(second.id).not.toBe(first.id);
    });

    it('should replace a running job without progress for an hour, failing it with the reason', async () => {
      const recording = recordingQueue();
      const filter = { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}` };
      const stalled = await startRecovery(filter, { DELIVERIES: recording.queue });
      const lastProgress = Date.now() - 61 * 60_000;
      await env.DB.prepare('UPDATE recovery_jobs SET updated_at = ?2 WHERE id = ?1')
        .bind(stalled.id, lastProgress)
        .run();
      const fresh = await startRecovery(filter, { DELIVERIES: recording.queue });
      expect(fresh.id).not.toBe(stalled.id);
      expect(fresh.state).toBe('running');
      const old = await recoveryJob(stalled.id);
      expect(old).toMatchObject({ state: 'failed', error: 'stalled: no progress for 60 minutes' });
      expect(Date.parse(old.finished_at ?? '')).toBeGreaterThan(lastProgress);
    });

    it('should keep a running job that made progress within the hour', async () => {
      const recording = recordingQueue();
      const filter = { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}` };
      const running = await startRecovery(filter, { DELIVERIES: recording.queue });
      await env.DB.prepare('UPDATE recovery_jobs SET updated_at = ?2 WHERE id = ?1')
        .bind(running.id, Date.now() - 59 * 60_000)
        .run();
      expect((await startRecovery(filter, { DELIVERIES: recording.queue })).id).toBe(running.id);
    });

    it('should record the operator: the Cloudflare Access user over the body', async () => {
      const recording = recordingQueue();
      const res = await fetchGateway(
        recoverRequest(
          { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}`, operator: 'typed' },
          false,
          { 'Cf-Access-Authenticated-User-Email': 'ada@example.com' },
        ),
        { DELIVERIES: recording.queue },
      );
      expect(res.status).toBe(202);
      expect((await dataOf<RecoveryJobData>(res)).operator).toBe('ada@example.com');
    });

    it.each([
      ['without since', {}, ['since']],
      ['with since not a date-time', { since: 'yesterday' }, ['since']],
      ['with until not after since', { since: SINCE, until: SINCE }, ['until']],
      ['with status delivered', { since: SINCE, status: 'delivered' }, ['status']],
      ['with an empty event_type', { since: SINCE, event_type: '' }, ['event_type']],
      ['with an empty subscription_id', { since: SINCE, subscription_id: '' }, ['subscription_id']],
      [
        'with an operator of 101 characters',
        { since: SINCE, operator: 'a'.repeat(101) },
        ['operator'],
      ],
      ['with an unknown field', { since: SINCE, statuses: ['failed'] }, ['statuses']],
    ])('should refuse a filter %s with 400 naming the field', async (_, body, paths) => {
      const recording = recordingQueue();
      for (const preview of [false, true]) {
        const res = await fetchGateway(recoverRequest(body, preview), {
          DELIVERIES: recording.queue,
        });
        await expectValidationFailed(res, paths);
      }
      expect(recording.batches).toEqual([]);
    });
  });

  describe('GET /admin/deliveries/recover', () => {
    it('should list the recently started jobs, newest first', async () => {
      const recording = recordingQueue();
      const older = await startRecovery(
        { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}` },
        { DELIVERIES: recording.queue },
      );
      const newer = await startRecovery(
        { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}`, operator: 'ada' },
        { DELIVERIES: recording.queue },
      );
      // Ordered by start time: both moved ahead of every other job of the file, the first
      // one a second before the second.
      const ahead = Date.now() + 3_600_000;
      for (const [id, at] of [
        [older.id, ahead],
        [newer.id, ahead + 1000],
      ] as const) {
        await env.DB.prepare('UPDATE recovery_jobs SET started_at = ?2 WHERE id = ?1')
          .bind(id, at)
          .run();
      }
      const res = await fetchGateway(adminRequest('GET', '/admin/deliveries/recover'));
      expect(res.status).toBe(200);
      const jobs = await dataOf<RecoveryJobData[]>(res);
      expect(jobs.length).toBeLessThanOrEqual(20);
      expect(jobs.slice(0, 2).map((job) => job.id)).toEqual([newer.id, older.id]);
      expect(jobs[0]).toEqual({ ...newer, started_at: new Date(ahead + 1000).toISOString() });
    });
  });

  describe('GET /admin/deliveries/recover/jobs/:id', () => {
    it('should answer the job as started', async () => {
      const recording = recordingQueue();
      const job = await startRecovery(
        { since: SINCE, subscription_id: `sub_${crypto.randomUUID()}`, operator: 'ada' },
        { DELIVERIES: recording.queue },
      );
      expect(await recoveryJob(job.id)).toEqual(job);
    });

    it('should answer 404 not_found for an unknown job', async () => {
      const res = await fetchGateway(
        adminRequest('GET', '/admin/deliveries/recover/jobs/rcv_missing'),
      );
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        code: 'not_found',
        message: 'No recovery job "rcv_missing"',
      });
    });
  });
});
