/**
 * The relay's cron housekeeping over three event shards (`D1_SHARDS = DB,DB_SHARD_1,DB_SHARD_2`),
 * through the Worker's `scheduled` handler on the three real D1 databases and a recording
 * `DELIVERIES`: each shard's overdue deliveries are re-enqueued naming their shard and reach
 * the subscriber; expired events are purged in every shard; a shard that fails does not stop
 * the others; the run's D1 statements stay
 * within its plan. The plan itself (worker/cron-budget.ts) is checked for every shard count.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { runScheduled } from '../../../worker/cron.ts';
import {
  cronPeriodMs,
  eventPurgeStatements,
  INVOCATION_QUERY_LIMIT,
  planCronRun,
  shardsOfRun,
} from '../../../worker/cron-budget.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { SWEEP_GRACE_MS } from '../../../worker/relay/sweeper.ts';
import { faultyD1 } from '../fault-bindings.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
} from '../relay/delivery-helpers.ts';
import { SHARDS, THREE_SHARDS } from '../shard-databases.ts';
import { countingBindings, deliveriesIn, eventIn, storeIn } from './shard-events.ts';

const logs = useCapturedLogs();
afterEach(disableTestSubscriptions);

const DAY_MS = 86_400_000;

/** Runs the Worker's `scheduled` handler at `scheduledTime` with three shards; returns what it sent. */
async function runCron(scheduledTime: number, overrides: Partial<Env> = {}): Promise<unknown[]> {
  const recorder = recordingQueue();
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime, cron: '*/15 * * * *' }),
    { ...env, ...THREE_SHARDS, DELIVERIES: recorder.queue, ...overrides },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return recorder.batches.flat().map((message) => message.body);
}

describe('relay housekeeping over event shards', () => {
  describe('scheduled', () => {
    it("should re-enqueue every shard's overdue deliveries naming the shard, and the subscriber gets them", async () => {
      const eventType = `sweep_shards_${crypto.randomUUID()}`;
      const { subscription, key } = await createReceiverSubscription({ eventTypes: [eventType] });
      const stored = await Promise.all(SHARDS.map((shard) => storeIn(shard, { eventType })));
      for (const event of stored) expect(event.deliveryIds).toHaveLength(1);
      const now = Date.now() + SWEEP_GRACE_MS + 1000;

      const sent = await runCron(now);

      const [inDb, inOne, inTwo] = stored.map((event) => event.deliveryIds[0]);
      // DB's message is as it was before shards: no `shard`.
      expect(sent).toContainEqual({ deliveryId: inDb, subscriptionId: subscription.id });
      expect(sent).toContainEqual({
        deliveryId: inOne,
        subscriptionId: subscription.id,
        shard: 'DB_SHARD_1',
      });
      expect(sent).toContainEqual({
        deliveryId: inTwo,
        subscriptionId: subscription.id,
        shard: 'DB_SHARD_2',
      });
      // Each claim moved its delivery's due time where the delivery is.
      for (const [index, shard] of SHARDS.entries()) {
        const eventId = stored[index]?.eventId ?? '';
        expect((await deliveriesIn(shard, eventId))[0]?.nextAttemptAt).toBe(now);
      }
      // The consumer takes the messages as sent: the subscriber gets the three events.
      const ours = sent.filter((body) =>
        [inDb, inOne, inTwo].includes((body as { deliveryId?: string }).deliveryId),
      );
      await runQueue(
        DELIVERIES_QUEUE,
        ours.map((body) => ({ body })),
        THREE_SHARDS,
      );
      const received = (await receivedUnder(key)).map(
        (request) => (JSON.parse(request.body) as { event_id: string }).event_id,
      );
      expect(received.sort()).toEqual(stored.map((event) => event.eventId).sort());
    });

    it('should purge the events past retention in every shard and keep the fresh ones', async () => {
      const eventType = `purge_shards_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [eventType] });
      const now = Date.now();
      const old = await Promise.all(
        SHARDS.map((shard) => storeIn(shard, { eventType, receivedAt: now - 31 * DAY_MS })),
      );
      const fresh = await Promise.all(
        SHARDS.map((shard) => storeIn(shard, { eventType, receivedAt: now - DAY_MS })),
      );

      await runCron(now, { RELAY_RETENTION_DAYS: '30' });

      for (const [index, shard] of SHARDS.entries()) {
        const gone = old[index]?.eventId ?? '';
        const kept = fresh[index]?.eventId ?? '';
        expect(await eventIn(shard, gone), `${shard} keeps an expired event`).toBeUndefined();
        expect(await deliveriesIn(shard, gone)).toEqual([]);
        expect((await eventIn(shard, kept))?.eventId, `${shard} lost a fresh event`).toBe(kept);
        expect(await deliveriesIn(shard, kept)).toHaveLength(1);
      }
    });

    it('should sweep the other shards when one fails, fail the run, and sweep that one on the next run', async () => {
      const eventType = `sweep_fault_${crypto.randomUUID()}`;
      const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
      const now = Date.now();
      const due = await Promise.all(SHARDS.map((shard) => storeIn(shard, { eventType })));
      const old = await storeIn('DB_SHARD_2', { eventType, receivedAt: now - 31 * DAY_MS });
      const broken = faultyD1(env.DB_SHARD_1, {
        failOn: /^\s*UPDATE deliveries SET next_attempt_at/,
      });
      const recorder = recordingQueue();
      const later = now + SWEEP_GRACE_MS + 1000;

      // DB_SHARD_1 is a test binding, not in the Worker's own Env type.
      const workerEnv = {
        ...env,
        ...THREE_SHARDS,
        RELAY_RETENTION_DAYS: '30',
        DB_SHARD_1: broken,
        DELIVERIES: recorder.queue,
      } as Env;
      await expect(
        runScheduled(createScheduledController({ scheduledTime: later }), workerEnv),
      ).rejects.toThrow(/injected fault/);

      expect(broken.injected).toBe(1);
      const sent = recorder.batches.flat().map((message) => message.body);
      const [inDb, inOne, inTwo] = due.map((event) => event.deliveryIds[0]);
      expect(sent).toContainEqual({ deliveryId: inDb, subscriptionId: subscription.id });
      expect(sent).toContainEqual({
        deliveryId: inTwo,
        subscriptionId: subscription.id,
        shard: 'DB_SHARD_2',
      });
      expect(sent.map((body) => (body as { deliveryId?: string }).deliveryId)).not.toContain(inOne);
      expect(await eventIn('DB_SHARD_2', old.eventId)).toBeUndefined();
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'relay_sweep_shard_failed', shard: 'DB_SHARD_1' }),
      );

      const next = await runCron(later + 60_000);
      expect(next).toContainEqual({
        deliveryId: inOne,
        subscriptionId: subscription.id,
        shard: 'DB_SHARD_1',
      });
    });

    it('should visit every shard within the statements of its plan', async () => {
      const counting = countingBindings();
      await runCron(Date.now(), counting.bindings);
      const plan = planCronRun(SHARDS.length);
      const total = Object.values(counting.statements).reduce((sum, n) => sum + n, 0);
      expect(total).toBeLessThanOrEqual(plan.maxQueries);
      // Each shard: its key purge, the claims of deliveries and of checks, its event purge.
      for (const shard of SHARDS) {
        expect(counting.statements[shard], `${shard} was not swept`).toBeGreaterThanOrEqual(4);
      }
    });
  });

  describe('planCronRun', () => {
    it('should plan one shard as the run was before shards', () => {
      expect(planCronRun(1)).toMatchObject({
        shardsPerRun: 1,
        keyStatementsPerShard: 10,
        eventStatementsPerShard: 10,
        claimLimitPerShard: 500,
      });
    });

    it('should stay under the invocation limit for any number of shards a configuration can hold', () => {
      // Up to 980 shards in all: more than seven generations of 128 with no binding in common.
      for (let shards = 1; shards <= 980; shards++) {
        const plan = planCronRun(shards);
        expect(plan.maxQueries, `${shards} shards`).toBeLessThan(INVOCATION_QUERY_LIMIT);
        expect(plan.shardsPerRun).toBeGreaterThanOrEqual(1);
        expect(plan.shardsPerRun).toBeLessThanOrEqual(shards);
        // What the run makes at most: the backlog check, the recovery job purge, and per
        // visited shard the two claims and the key and event purges, the events taking
        // what the keys left.
        const purges =
          plan.shardsPerRun * (plan.keyStatementsPerShard + plan.eventStatementsPerShard);
        const worst = shards + 3 + 1 + plan.shardsPerRun * 2 + purges;
        expect(worst).toBeLessThanOrEqual(plan.maxQueries);
        const keysUsed = plan.shardsPerRun; // every key purge stopped after one statement
        const eventsMax =
          plan.shardsPerRun * eventPurgeStatements(plan, plan.shardsPerRun, keysUsed);
        expect(keysUsed + eventsMax).toBeLessThanOrEqual(purges);
      }
    });

    it('should visit every shard of one generation of 128 in each run', () => {
      for (let shards = 1; shards <= 128; shards++) {
        expect(planCronRun(shards).shardsPerRun).toBe(shards);
      }
    });
  });

  describe('shardsOfRun', () => {
    it('should continue each run where the previous one stopped, so every shard is reached in turn', () => {
      for (const shards of [197, 256, 384, 500, 900]) {
        const names = Array.from({ length: shards }, (_, index) => `DB_${index}`);
        const { shardsPerRun } = planCronRun(shards);
        for (const cron of ['*/15 * * * *', '*/5 * * * *', '* * * * *', '0 3 * * *']) {
          const period = cronPeriodMs(cron);
          const visits = new Map<string, number>();
          const rounds = Math.ceil(shards / shardsPerRun);
          const first = 1_795_000_000_000 - (1_795_000_000_000 % period);
          let previousEnd: string | undefined;
          for (let run = 0; run < rounds; run++) {
            const visited = shardsOfRun(names, shardsPerRun, first + run * period, period);
            expect(visited).toHaveLength(shardsPerRun);
            if (previousEnd !== undefined) {
              // The next shard after the last one visited comes first.
              const next = names[(names.indexOf(previousEnd) + 1) % shards];
              expect(visited[0]).toBe(next);
            }
            previousEnd = visited.at(-1);
            for (const name of visited) visits.set(name, (visits.get(name) ?? 0) + 1);
          }
          expect(visits.size, `${shards} shards, ${cron}`).toBe(shards);
        }
      }
    });

    it('should visit them all when they fit', () => {
      expect(shardsOfRun(['DB', 'DB_SHARD_1'], 2, Date.now(), 900_000)).toEqual([
        'DB',
        'DB_SHARD_1',
      ]);
    });
  });
});
