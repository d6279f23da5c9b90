/**
 * Bulk recovery over three event shards: failed deliveries written where the placement puts
 * their events, a job started through the real admin route and its pages run through the
 * real Worker's `queue` handler and the real D1 databases, each step's messages recorded.
 * Every matching delivery of every shard is reset and enqueued once, naming its shard; the
 * preview sums the shards; a page message delivered twice, or a page failing between its
 * shard and `DB`, neither skips nor repeats a delivery.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { RECOVERY_PAGE_SIZE } from '../../../worker/relay/recover.ts';
import { faultyD1 } from '../fault-bindings.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
} from '../relay/delivery-helpers.ts';
import { type RecoveryJobData, recoverRequest, recoveryJob } from '../relay/recovery-helpers.ts';
import { dataOf } from '../routes/admin/admin-helpers.ts';
import { database, SHARDS, THREE_SHARDS } from '../shard-databases.ts';
import {
  type DriveOptions,
  driveJob,
  enqueuedShards,
  expectedShards,
  type SeededDelivery,
  seedOnShards,
  statusesOf,
} from './shard-recovery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const HOUR_MS = 3_600_000;

/**
 * Failed deliveries of a fresh type on every shard (two pages' worth on DB_SHARD_1), some to
 * a disabled subscription, one already delivered.
 */
async function seeded() {
  const eventType = `recover_${crypto.randomUUID()}`;
  const since = Date.now() - HOUR_MS;
  const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
  const off = await createReceiverSubscription({ eventTypes: [eventType], enabled: false });
  const recovered = await seedOnShards({
    subscriptionId: subscription.id,
    eventType,
    count: { DB: 30, DB_SHARD_1: RECOVERY_PAGE_SIZE + 30, DB_SHARD_2: 20 },
    createdAt: since,
  });
  const skipped = await seedOnShards({
    subscriptionId: off.subscription.id,
    eventType,
    count: { DB_SHARD_1: 1, DB_SHARD_2: 2 },
    createdAt: since,
  });
  const delivered = await seedOnShards({
    subscriptionId: subscription.id,
    eventType,
    count: { DB_SHARD_2: 1 },
    status: 'delivered',
    createdAt: since,
  });
  return { eventType, since, recovered, skipped, delivered };
}

/** Starts a job over the type through the admin route with three shards; its first step. */
async function start(eventType: string, since: number) {
  const recording = recordingQueue();
  const body = { since: new Date(since).toISOString(), event_type: eventType, operator: 'ada' };
  const res = await fetchGateway(recoverRequest(body), {
    ...THREE_SHARDS,
    DELIVERIES: recording.queue,
  });
  expect(res.status).toBe(202);
  const job = await dataOf<RecoveryJobData>(res);
  const first = recording.batches.flat()[0]?.body as Record<string, unknown>;
  expect(first).toEqual({ kind: 'recover', jobId: job.id, page: 0 });
  return { job, first };
}

/** Runs the job and checks every shard's deliveries were recovered once, with their shard. */
async function recoverAll(options: DriveOptions = {}) {
  const { eventType, since, recovered, skipped, delivered } = await seeded();
  const { job, first } = await start(eventType, since);

  const sent = await driveJob(first, options);

  expect(enqueuedShards(sent.deliveries)).toEqual(expectedShards(recovered));
  expect(sent.deliveries[0]).toMatchObject({ trigger: 'recover', operator: 'ada' });
  const statuses = await statusesOf([...recovered, ...skipped, ...delivered]);
  expect(statuses).toEqual({
    ...Object.fromEntries(recovered.map((d) => [d.deliveryId, 'pending'])),
    ...Object.fromEntries(skipped.map((d) => [d.deliveryId, 'failed'])),
    ...Object.fromEntries(delivered.map((d) => [d.deliveryId, 'delivered'])),
  });
  // DB: one page; DB_SHARD_1: a full page and the rest; DB_SHARD_2: one page.
  expect(await recoveryJob(job.id)).toMatchObject({
    state: 'done',
    pages: 4,
    matched: recovered.length + skipped.length,
    enqueued: recovered.length,
    skipped_disabled: skipped.length,
    error: null,
  });
  return { sent, recovered, job };
}

/** The shards of some seeded deliveries, as a count per shard. */
function perShard(deliveries: readonly SeededDelivery[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of deliveries) out[d.shard] = (out[d.shard] ?? 0) + 1;
  return out;
}

describe('bulk recovery over event shards', () => {
  describe('POST /admin/deliveries/recover and its pages', () => {
    it('should reset and enqueue every matching delivery of every shard once, naming its shard, and end done with the counts', async () => {
      const { sent, recovered, job } = await recoverAll();
      expect(perShard(recovered)).toEqual({ DB: 30, DB_SHARD_1: 130, DB_SHARD_2: 20 });
      // One message per page: no page read twice, none skipped.
      expect(sent.steps).toEqual(
        [1, 2, 3].map((page) => ({ kind: 'recover', jobId: job.id, page })),
      );
      // Each delivery was reset while the job ran, due at once (updated and due together).
      const done = await recoveryJob(job.id);
      const [from, to] = [Date.parse(done.started_at), Date.parse(done.finished_at ?? '')];
      for (const shard of SHARDS) {
        const ids = recovered.filter((d) => d.shard === shard).map((d) => d.deliveryId);
        const { results } = await database(shard)
          .prepare(
            `SELECT next_attempt_at AS due, updated_at FROM deliveries
             WHERE id IN (SELECT value FROM json_each(?1))`,
          )
          .bind(JSON.stringify(ids))
          .all<{ due: number; updated_at: number }>();
        expect(results).toHaveLength(ids.length);
        for (const row of results) {
          expect(row.due).toBe(row.updated_at);
          expect(row.due).toBeGreaterThanOrEqual(from);
          expect(row.due).toBeLessThanOrEqual(to);
        }
      }
    }, 60_000);

    it('should take each page once when every page message is delivered twice, one after the other', async () => {
      await recoverAll({ copies: 'again' });
    }, 60_000);

    it('should take each page once when every page message is delivered twice in one batch', async () => {
      await recoverAll({ copies: 'together' });
    }, 60_000);

    it('should move the job with what the shard recorded when a page fails after it was taken there', async () => {
      // Page 2 is DB_SHARD_1's second: its reset lands, then moving the job in DB fails once.
      const db = faultyD1(env.DB, { failOn: /UPDATE recovery_jobs SET pages/, when: 'before' });
      const { sent } = await recoverAll({
        bindingsFor: (page) => (page === 2 ? { DB: db } : undefined),
      });
      expect(db.injected).toBe(1);
      expect(sent.results.flatMap((r) => r.retryMessages)).toEqual([
        { msgId: 'msg-0', delaySeconds: 5 },
      ]);
    }, 60_000);

    it('should take a page again when its shard failed it before writing', async () => {
      const shard = faultyD1(env.DB_SHARD_1, { failOn: /INSERT INTO recovery_pages/ });
      const { sent } = await recoverAll({
        // The test's Env types the shard bindings apart from the Worker's.
        bindingsFor: (page) =>
          page === 1 ? ({ DB_SHARD_1: shard } as unknown as Partial<Env>) : undefined,
      });
      expect(shard.injected).toBe(1);
      expect(sent.results.flatMap((r) => r.retryMessages)).toHaveLength(1);
    }, 60_000);
  });

  describe('POST /admin/deliveries/recover/preview', () => {
    it('should count the matching deliveries of every shard', async () => {
      const { eventType, since, recovered, skipped } = await seeded();
      const body = { since: new Date(since).toISOString(), event_type: eventType };

      const res = await fetchGateway(recoverRequest(body, true), THREE_SHARDS);

      expect(res.status).toBe(200);
      expect(await dataOf(res)).toEqual({
        matched: recovered.length + skipped.length,
        skipped_disabled: skipped.length,
        capped: false,
      });
    }, 30_000);
  });
});
