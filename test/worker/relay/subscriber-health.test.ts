/**
 * Subscriber health through the real queue consumer, the real D1 and the recording receiver
 * over real HTTP: healthy -> failing -> healthy with reasons and times, the recent success
 * rate, the disable on a 410 and after failures for SUBSCRIPTION_DISABLE_AFTER_HOURS (the run's
 * start is written by the test, so no test waits), and the `subscription.disabled` event
 * delivered to a subscription that asks for it.
 */
import { createMessageBatch, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findSubscription } from '../../../worker/db/subscriptions.ts';
import { bodySubscriptionIdSql } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { AttemptTally } from '../../../worker/relay/outbox-health.ts';
import { SubscriptionCopy } from '../../../worker/relay/outbox-subscription.ts';
import { settleDelivery } from '../../../worker/relay/settle-delivery.ts';
import { fetchGateway, recordingDb, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
  setReceiverStatus,
  storeDelivery,
} from './delivery-helpers.ts';
import { outboxOf } from './outbox-helpers.ts';

const HOUR_MS = 3_600_000;

useCapturedLogs();
afterEach(disableTestSubscriptions);

async function attempt(deliveryId: string, overrides: Partial<Env> = {}) {
  return runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId } }], overrides);
}

async function healthView(id: string) {
  const res = await fetchGateway(adminRequest('GET', `/admin/subscriptions/${id}`));
  return (await dataOf(res)).health;
}

/** Starts the subscription's run of failures at `since`, as if its attempts had failed since. */
async function failingSince(id: string, since: number): Promise<void> {
  await env.DB.prepare('UPDATE subscriptions SET failing_since = ?2 WHERE id = ?1')
    .bind(id, since)
    .run();
}

/** The `subscription.disabled` deliveries a watcher got about `subjectId`. */
async function disabledEventsFor(watcherId: string, subjectId: string) {
  const { results } = await env.DB.prepare(
    `SELECT d.id FROM deliveries AS d JOIN webhook_events AS e ON e.event_id = d.event_id
     WHERE d.subscription_id = ?1 AND e.event_type = 'subscription.disabled'
       AND ${bodySubscriptionIdSql('e')} = ?2`,
  )
    .bind(watcherId, subjectId)
    .all<{ id: string }>();
  return results;
}

describe('subscriber health', () => {
  describe('attempts through the consumer', () => {
    it('should stay healthy and count a delivered attempt', async () => {
      const stored = await storeDelivery({ query: { status: '200' } });
      await attempt(stored.deliveryId);
      const health = await healthView(stored.subscription.id);
      expect(health).toMatchObject({ state: 'healthy', reason: null, failing_since: null });
      expect(health.success_rate).toEqual({
        window_hours: 24,
        attempts: 1,
        succeeded: 1,
        failed: 0,
        rate: 1,
      });
    });

    it('should turn failing on a failed attempt, and healthy again on a success', async () => {
      const stored = await storeDelivery();
      await setReceiverStatus(stored.key, 500);
      const before = Date.now();
      await attempt(stored.deliveryId);
      const failing = await healthView(stored.subscription.id);
      expect(failing).toMatchObject({
        state: 'failing',
        reason: `HTTP 500 from the subscriber at ${failing.changed_at}`,
        failing_since: failing.changed_at,
      });
      expect(Date.parse(failing.changed_at)).toBeGreaterThanOrEqual(before);

      await setReceiverStatus(stored.key, 200);
      await attempt(stored.deliveryId);
      const healthy = await healthView(stored.subscription.id);
      expect(healthy).toMatchObject({
        state: 'healthy',
        reason: `delivered (HTTP 200) at ${healthy.changed_at}`,
        failing_since: null,
      });
      expect(Date.parse(healthy.changed_at)).toBeGreaterThanOrEqual(Date.parse(failing.changed_at));
      expect(healthy.success_rate).toMatchObject({
        attempts: 2,
        succeeded: 1,
        failed: 1,
        rate: 0.5,
      });
    });

    it('should write DB only the attempts that change the health', async () => {
      const stored = await storeDelivery();
      const [message] = createMessageBatch(DELIVERIES_QUEUE, [
        {
          id: 'msg-0',
          timestamp: new Date(),
          attempts: 1,
          body: { deliveryId: stored.deliveryId },
        },
      ]).messages;
      const { db, statements, batches } = recordingDb();
      // The subscriptions' copy as shipped, so an attempt that changes nothing reads nothing.
      const workerEnv = { ...env, DB: db, SUBSCRIPTION_CACHE_SEC: '10' };
      const subscription = new SubscriptionCopy(stored.subscription.id);
      const settle = async (status: number) => {
        const settledAt = Date.now();
        const sendResult = {
          startedAt: settledAt - 5,
          status,
          latencyMs: 5,
          error: null,
          responseExcerpt: 'busy',
          retryAfter: null,
        };
        const sent = {
          kind: 'sent',
          eventId: stored.eventId,
          subscriptionId: stored.subscription.id,
          sendResult,
          settledAt,
        } as const;
        const outbox = outboxOf(stored.subscription.id);
        await runInDurableObject(outbox, (_, state) =>
          settleDelivery(message as Message<unknown>, workerEnv, stored.deliveryId, sent, {
            subscription,
            tally: new AttemptTally(state.storage.kv),
          }),
        );
      };
      const subscriptionWrites = () =>
        statements.filter((sql) => /UPDATE subscriptions/.test(sql)).length;

      await settle(503);
      // The attempt and the delivery's state in one batch, then the move to failing.
      expect(batches).toEqual([2]);
      expect(subscriptionWrites()).toBe(1);
      expect((await healthView(stored.subscription.id)).state).toBe('failing');

      // Still failing: no write. The move dropped the outbox's copy, read again once here.
      await settle(503);
      expect(subscriptionWrites()).toBe(1);
      const before = statements.length;
      await settle(503);
      // And then: the attempt's own batch, and no read or write of the subscription.
      expect(batches).toEqual([2, 2, 2]);
      expect(statements.slice(before).filter((sql) => /subscriptions/.test(sql))).toEqual([]);

      await settle(200);
      expect(subscriptionWrites()).toBe(2);
      expect((await healthView(stored.subscription.id)).state).toBe('healthy');
      const attempts = await env.DB.prepare(
        'SELECT status FROM delivery_attempts WHERE delivery_id = ?1 ORDER BY started_at',
      )
        .bind(stored.deliveryId)
        .all<{ status: number }>();
      expect(attempts.results.map((row) => row.status)).toEqual([503, 503, 503, 200]);
    });

    it('should keep the start of a run of failures while it lasts', async () => {
      const stored = await storeDelivery({ query: { status: '503' } });
      await attempt(stored.deliveryId);
      const first = await healthView(stored.subscription.id);
      await attempt(stored.deliveryId);
      const second = await healthView(stored.subscription.id);
      expect(second).toMatchObject({
        state: 'failing',
        failing_since: first.failing_since,
        changed_at: first.changed_at,
        reason: first.reason,
      });
      expect(second.success_rate).toMatchObject({ attempts: 2, failed: 2, rate: 0 });
    });

    it('should count an attempt refused before sending as a failure, with its error', async () => {
      // A private address: the URL check refuses it before any request, for good.
      const stored = await storeDelivery({ url: 'http://10.1.2.3/hooks' });
      await attempt(stored.deliveryId);
      const health = await healthView(stored.subscription.id);
      expect(health.state).toBe('failing');
      expect(health.reason).toMatch(/^no response \(URL refused: .+\) at \d{4}-/);
      expect(health.success_rate).toMatchObject({ attempts: 1, failed: 1 });
    });

    it('should count only the attempts of the last 24 hours in the success rate', async () => {
      const stored = await storeDelivery({ query: { status: '200' } });
      const hour = Math.floor(Date.now() / HOUR_MS);
      const outbox = outboxOf(stored.subscription.id);
      // Counts stored as an earlier day's attempts would have left them.
      await runInDurableObject(outbox, (_, state) => {
        state.storage.kv.put('attempt_hours', {
          [hour - 24]: { succeeded: 0, failed: 7 },
          [hour - 23]: { succeeded: 0, failed: 5 },
        });
      });
      await attempt(stored.deliveryId);
      expect((await healthView(stored.subscription.id)).success_rate).toMatchObject({
        attempts: 6,
        succeeded: 1,
        failed: 5,
      });
      // The hour past the window is dropped when the run's counts are written.
      await vi.waitFor(async () => {
        const stored = await runInDurableObject(outbox, (_, state) =>
          state.storage.kv.get<Record<string, unknown>>('attempt_hours'),
        );
        expect(Object.keys(stored ?? {}).map(Number)).toEqual([hour - 23, hour]);
      });
    });
  });

  describe('disable on 410 Gone', () => {
    it('should disable with the reason and time, and tell a subscription that asks', async () => {
      const watcher = await createReceiverSubscription({ eventTypes: ['subscription.disabled'] });
      const stored = await storeDelivery({ query: { status: '410' } });
      await attempt(stored.deliveryId);
      const record = await findSubscription(env.DB, stored.subscription.id);
      const at = record?.health.disabledAt ?? 0;
      expect(record).toMatchObject({ enabled: false });
      expect(record?.health).toEqual({
        failingSince: at,
        disabledAt: at,
        changedAt: at,
        reason: `410 Gone from the subscriber at ${new Date(at).toISOString()}`,
      });
      expect((await healthView(stored.subscription.id)).state).toBe('disabled');

      const [event, ...more] = await disabledEventsFor(
        watcher.subscription.id,
        stored.subscription.id,
      );
      expect(more).toEqual([]);
      expect(event).toBeDefined();
      await attempt(event?.id ?? '');
      const [received] = await receivedUnder(watcher.key);
      expect(JSON.parse(received?.body ?? '{}')).toMatchObject({
        event_type: 'subscription.disabled',
        data: {
          subscription_id: stored.subscription.id,
          host: new URL(stored.subscription.url).host,
          reason: record?.health.reason,
          disabled_at: new Date(at).toISOString(),
        },
      });
    });
  });

  describe('disable after failures for SUBSCRIPTION_DISABLE_AFTER_HOURS', () => {
    it('should disable once every attempt failed for 24 h (the default)', async () => {
      const watcher = await createReceiverSubscription({ eventTypes: ['subscription.disabled'] });
      const stored = await storeDelivery({ query: { status: '500' } });
      const since = Date.now() - 24 * HOUR_MS - 60_000;
      await failingSince(stored.subscription.id, since);
      await attempt(stored.deliveryId);
      const record = await findSubscription(env.DB, stored.subscription.id);
      expect(record?.enabled).toBe(false);
      expect(record?.health).toMatchObject({
        failingSince: since,
        reason: `every attempt failed for 24 h since ${new Date(since).toISOString()}`,
      });
      expect(record?.health.disabledAt).toBeGreaterThanOrEqual(since + 24 * HOUR_MS);
      expect(await disabledEventsFor(watcher.subscription.id, stored.subscription.id)).toHaveLength(
        1,
      );
    });

    it('should keep a subscription failing for less than the span enabled', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      const since = Date.now() - 23 * HOUR_MS;
      await failingSince(stored.subscription.id, since);
      await attempt(stored.deliveryId);
      expect(await findSubscription(env.DB, stored.subscription.id)).toMatchObject({
        enabled: true,
        health: { failingSince: since },
      });
    });

    it('should never disable for a failure a success ended', async () => {
      const stored = await storeDelivery({ query: { status: '200' } });
      await failingSince(stored.subscription.id, Date.now() - 48 * HOUR_MS);
      await attempt(stored.deliveryId);
      expect(await findSubscription(env.DB, stored.subscription.id)).toMatchObject({
        enabled: true,
        health: { failingSince: null },
      });
    });

    it('should follow the setting, and never disable for failures with 0', async () => {
      const short = await storeDelivery({ query: { status: '500' } });
      const since = Date.now() - HOUR_MS - 60_000;
      await failingSince(short.subscription.id, since);
      await attempt(short.deliveryId, { SUBSCRIPTION_DISABLE_AFTER_HOURS: '1' });
      expect((await findSubscription(env.DB, short.subscription.id))?.health.reason).toBe(
        `every attempt failed for 1 h since ${new Date(since).toISOString()}`,
      );

      const never = await storeDelivery({ query: { status: '500' } });
      await failingSince(never.subscription.id, Date.now() - 30 * 24 * HOUR_MS);
      await attempt(never.deliveryId, { SUBSCRIPTION_DISABLE_AFTER_HOURS: '0' });
      expect((await findSubscription(env.DB, never.subscription.id))?.enabled).toBe(true);
    });
  });
});
