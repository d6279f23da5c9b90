/**
 * The relay sweeper's purge of finished bulk recovery jobs (worker/relay/sweeper.ts,
 * worker/db/recovery-jobs.ts) on the real D1: jobs that finished before the relay's
 * retention go, recent and running ones stay, and one run deletes a bounded batch.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findRecoveryJob } from '../../../worker/db/recovery-jobs.ts';
import { sweepRelay } from '../../../worker/relay/sweeper.ts';

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;

/** The statement storing one job in `state`, started and (unless running) finished at `at`. */
function jobRow(
  state: 'running' | 'done' | 'failed',
  at: number,
): {
  id: string;
  statement: D1PreparedStatement;
} {
  const id = `rcv_${crypto.randomUUID()}`;
  const statement = env.DB.prepare(
    `INSERT INTO recovery_jobs (id, filter_key, since, state, started_at, updated_at, finished_at)
     VALUES (?1, ?2, ?3, ?4, ?3, ?3, ?5)`,
  ).bind(id, JSON.stringify([id]), at, state, state === 'running' ? null : at);
  return { id, statement };
}

async function storeJob(state: 'running' | 'done' | 'failed', at: number): Promise<string> {
  const { id, statement } = jobRow(state, at);
  await statement.run();
  return id;
}

describe('sweeper', () => {
  describe('sweepRelay: recovery jobs', () => {
    it('should delete jobs finished before the retention and keep recent and running ones', async () => {
      const now = Date.now();
      const oldDone = await storeJob('done', now - 31 * DAY_MS);
      const oldFailed = await storeJob('failed', now - 31 * DAY_MS);
      const recentDone = await storeJob('done', now - 29 * DAY_MS);
      const oldRunning = await storeJob('running', now - 40 * DAY_MS);
      const result = await sweepRelay(env, now, RETENTION_DAYS, 0);
      expect(result.purgedRecoveryJobs).toBe(2);
      expect(await findRecoveryJob(env.DB, oldDone)).toBeUndefined();
      expect(await findRecoveryJob(env.DB, oldFailed)).toBeUndefined();
      expect((await findRecoveryJob(env.DB, recentDone))?.state).toBe('done');
      expect((await findRecoveryJob(env.DB, oldRunning))?.state).toBe('running');
    });

    it('should delete at most 500 jobs per run, oldest first, and the rest on the next run', async () => {
      const now = Date.now();
      // 501 jobs finished a minute apart, the newest 31 days ago.
      const jobs = Array.from({ length: 501 }, (_, n) =>
        jobRow('done', now - 31 * DAY_MS - (501 - n) * 60_000),
      );
      await env.DB.batch(jobs.map((job) => job.statement));
      const first = await sweepRelay(env, now, RETENTION_DAYS, 0);
      expect(first.purgedRecoveryJobs).toBe(500);
      expect(await findRecoveryJob(env.DB, jobs[0]?.id ?? '')).toBeUndefined();
      expect((await findRecoveryJob(env.DB, jobs[500]?.id ?? ''))?.state).toBe('done');
      const second = await sweepRelay(env, now, RETENTION_DAYS, 0);
      expect(second.purgedRecoveryJobs).toBe(1);
      expect(await findRecoveryJob(env.DB, jobs[500]?.id ?? '')).toBeUndefined();
    });
  });
});
