/**
 * D1 queries of bulk recovery (worker/db/recovery-jobs.ts, worker/db/recovery-pages.ts) on
 * the real D1: the preview's cap, the page bounds (since, until, the job's start, the
 * cursor) and the take's re-check of each delivery's status.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import {
  findRecoveryJob,
  type RecoveryFilter,
  startRecoveryJob,
} from '../../../worker/db/recovery-jobs.ts';
import {
  countRecoverable,
  readRecoveryPage,
  takeRecoveryPage,
} from '../../../worker/db/recovery-pages.ts';
import { createReceiverSubscription, disableTestSubscriptions } from '../relay/delivery-helpers.ts';
import { seedDeliveries } from '../relay/recovery-helpers.ts';

afterEach(disableTestSubscriptions);

const T0 = Date.UTC(2026, 0, 10);

/** An enabled subscription's `count` failed deliveries, created 1 ms apart from T0. */
async function seeded(count: number) {
  const { subscription } = await createReceiverSubscription();
  const ids = await seedDeliveries({
    subscriptionId: subscription.id,
    eventType: `recover_${crypto.randomUUID()}`,
    count,
    createdAt: T0,
  });
  const filter: RecoveryFilter = {
    since: T0,
    until: null,
    subscriptionId: subscription.id,
    status: null,
    eventType: null,
  };
  return { ids, filter };
}

async function jobFor(filter: RecoveryFilter, startedAt: number) {
  const id = `rcv_${crypto.randomUUID()}`;
  const { job } = await startRecoveryJob(env.DB, id, filter, null, startedAt, 3_600_000);
  return job;
}

describe('recovery queries', () => {
  describe('countRecoverable', () => {
    it('should count up to the cap and say when more match', async () => {
      const { filter } = await seeded(7);
      expect(await countRecoverable(env.DB, filter, Date.now(), 5)).toEqual({
        matched: 5,
        skippedDisabled: 0,
        capped: true,
      });
      expect(await countRecoverable(env.DB, filter, Date.now(), 7)).toEqual({
        matched: 7,
        skippedDisabled: 0,
        capped: false,
      });
    });
  });

  describe('readRecoveryPage', () => {
    it('should read oldest first from since, before until and the job start, after the cursor', async () => {
      const { ids, filter } = await seeded(10);
      // until excludes the last two; the job started before the last three were created.
      const job = await jobFor({ ...filter, since: T0 + 1, until: T0 + 8 }, T0 + 7);
      const page = await readRecoveryPage(env.DB, job, job.startedAt, 100);
      expect(page.map((c) => c.id)).toEqual(ids.slice(1, 7));
      expect(page.every((c) => c.enabled)).toBe(true);

      const first = await readRecoveryPage(env.DB, job, job.startedAt, 2);
      expect(first.map((c) => c.id)).toEqual(ids.slice(1, 3));
      const taken = await takeRecoveryPage(
        env.DB,
        job,
        { page: 0, candidates: first, last: false },
        Date.now(),
      );
      expect(taken).toEqual(ids.slice(1, 3));
      const after = await findRecoveryJob(env.DB, job.id);
      if (after === undefined) throw new Error('job gone');
      expect(after).toMatchObject({ pages: 1, matched: 2, enqueued: 2, state: 'running' });
      expect(after.cursor).toEqual({ at: T0 + 2, id: ids[2] });
      const second = await readRecoveryPage(env.DB, after, after.startedAt, 2);
      expect(second.map((c) => c.id)).toEqual(ids.slice(3, 5));
    });
  });

  describe('takeRecoveryPage', () => {
    it('should leave a delivery delivered meanwhile alone and count only what it reset', async () => {
      const { ids, filter } = await seeded(3);
      const job = await jobFor(filter, Date.now());
      const candidates = await readRecoveryPage(env.DB, job, job.startedAt, 100);
      await env.DB.prepare(`UPDATE deliveries SET status = 'delivered' WHERE id = ?1`)
        .bind(ids[1])
        .run();
      const now = Date.now();
      const taken = await takeRecoveryPage(env.DB, job, { page: 0, candidates, last: true }, now);
      expect(taken).toEqual([ids[0], ids[2]]);
      expect(await findDelivery(env.DB, ids[1] ?? '')).toMatchObject({ status: 'delivered' });
      expect(await findDelivery(env.DB, ids[0] ?? '')).toMatchObject({
        status: 'pending',
        nextAttemptAt: now,
      });
      expect(await findRecoveryJob(env.DB, job.id)).toMatchObject({
        state: 'done',
        pages: 1,
        matched: 3,
        enqueued: 2,
        finishedAt: now,
      });
    });

    it('should take a page once: the same page again changes nothing', async () => {
      const { ids, filter } = await seeded(2);
      const job = await jobFor(filter, Date.now());
      const candidates = await readRecoveryPage(env.DB, job, job.startedAt, 100);
      const step = { page: 0, candidates, last: false };
      expect(await takeRecoveryPage(env.DB, job, step, Date.now())).toEqual(ids);
      await env.DB.prepare(
        `UPDATE deliveries SET status = 'failed' WHERE id IN (SELECT value FROM json_each(?1))`,
      )
        .bind(JSON.stringify(ids))
        .run();
      expect(await takeRecoveryPage(env.DB, job, step, Date.now())).toBeNull();
      expect(await findDelivery(env.DB, ids[0] ?? '')).toMatchObject({ status: 'failed' });
    });
  });
});
