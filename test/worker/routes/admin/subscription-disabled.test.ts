/**
 * A disabled subscription through the admin API, the real D1 and the real queue consumer:
 * retry and replay answer 409 `subscription_disabled` with the reason instead of a 202 that
 * sends nothing; an operator's disable records its reason and announces it; re-enabling with
 * `requeue_pending` re-enqueues what waited for it and says how many.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../../worker/db/deliveries.ts';
import { bodySubscriptionIdSql, findWebhookEvent } from '../../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../../worker/relay/consumer.ts';
import { errorBody, fetchGateway, useCapturedLogs } from '../../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  insertDeliveries,
  recordingQueue,
  runQueue,
  storeDelivery,
  storeEvent,
} from '../../relay/delivery-helpers.ts';
import { adminRequest, dataOf } from './admin-helpers.ts';

const HOUR_MS = 3_600_000;

useCapturedLogs();
afterEach(disableTestSubscriptions);

function patch(id: string, json: unknown, queue?: Queue) {
  return fetchGateway(
    adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }),
    queue === undefined ? {} : { DELIVERIES: queue },
  );
}

function retry(deliveryId: string, queue: Queue) {
  return fetchGateway(adminRequest('POST', `/admin/deliveries/${deliveryId}/retry`), {
    DELIVERIES: queue,
  });
}

function replay(eventId: string, json: unknown, queue: Queue) {
  return fetchGateway(
    adminRequest('POST', `/admin/events/${encodeURIComponent(eventId)}/replay`, { json }),
    { DELIVERIES: queue },
  );
}

/** The delivery ids a recording queue was sent, in order. */
function sentIds(batches: MessageSendRequest[][]): string[] {
  return batches.flat().map((message) => (message.body as { deliveryId: string }).deliveryId);
}

/** A subscription disabled by its subscriber's 410, and its failed delivery. */
async function goneSubscription() {
  const stored = await storeDelivery({ query: { status: '410' } });
  await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
  expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({ status: 'failed' });
  return stored;
}

describe('disabled subscriptions', () => {
  describe('POST /admin/deliveries/:id/retry', () => {
    it('should answer 409 subscription_disabled with the reason until it is enabled again', async () => {
      const stored = await goneSubscription();
      const { queue, batches } = recordingQueue();
      const res = await retry(stored.deliveryId, queue);
      expect(res.status).toBe(409);
      const body = await errorBody(res);
      expect(body.code).toBe('subscription_disabled');
      expect(body.message).toMatch(
        new RegExp(
          `^Subscription "${stored.subscription.id}" is disabled \\(410 Gone from the subscriber at \\d{4}-`,
        ),
      );
      expect(batches).toEqual([]);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({ status: 'failed' });

      expect((await patch(stored.subscription.id, { enabled: true })).status).toBe(200);
      const again = recordingQueue();
      expect((await retry(stored.deliveryId, again.queue)).status).toBe(202);
      expect(sentIds(again.batches)).toEqual([stored.deliveryId]);
    });

    it('should answer 404 when the subscription was deleted', async () => {
      const stored = await storeDelivery();
      const deleted = await fetchGateway(
        adminRequest('DELETE', `/admin/subscriptions/${stored.subscription.id}`),
      );
      expect(deleted.status).toBe(204);
      const { queue, batches } = recordingQueue();
      const res = await retry(stored.deliveryId, queue);
      expect(res.status).toBe(404);
      expect((await errorBody(res)).message).toContain('was deleted');
      expect(batches).toEqual([]);
    });
  });

  describe('POST /admin/events/:id/replay', () => {
    it('should skip a disabled subscription among enabled ones and name it', async () => {
      const type = `test_${crypto.randomUUID()}`;
      const on = await createReceiverSubscription({ eventTypes: [type] });
      const off = await createReceiverSubscription({ eventTypes: [type] });
      expect((await patch(off.subscription.id, { enabled: false })).status).toBe(200);
      const stored = await storeEvent(type);
      const { queue, batches } = recordingQueue();
      const res = await replay(stored.eventId, undefined, queue);
      expect(res.status).toBe(202);
      const data = await dataOf<{ delivery_ids: string[]; skipped_subscriptions: unknown[] }>(res);
      expect(data.delivery_ids).toHaveLength(1);
      expect(data.skipped_subscriptions).toEqual([
        {
          subscription_id: off.subscription.id,
          reason: expect.stringMatching(/^disabled by an operator, since \d{4}-/),
        },
      ]);
      expect(sentIds(batches)).toEqual(data.delivery_ids);
      const delivery = await findDelivery(env.DB, data.delivery_ids[0] ?? '');
      expect(delivery?.subscriptionId).toBe(on.subscription.id);
    });

    it('should answer 409 when every matching subscription is disabled', async () => {
      const type = `test_${crypto.randomUUID()}`;
      const a = await createReceiverSubscription({ eventTypes: [type] });
      const b = await createReceiverSubscription({ eventTypes: [type] });
      const stored = await storeEvent(type);
      for (const { subscription } of [a, b]) await patch(subscription.id, { enabled: false });
      const { queue, batches } = recordingQueue();
      const res = await replay(stored.eventId, undefined, queue);
      expect(res.status).toBe(409);
      const body = await errorBody(res);
      expect(body.code).toBe('subscription_disabled');
      expect(body.message).toContain(a.subscription.id);
      expect(body.message).toContain(b.subscription.id);
      expect(body.message).toContain('disabled by an operator');
      expect(batches).toEqual([]);
    });

    it('should answer 409 for a disabled subscription named in subscription_id', async () => {
      const stored = await goneSubscription();
      const { queue, batches } = recordingQueue();
      const res = await replay(stored.eventId, { subscription_id: stored.subscription.id }, queue);
      expect(res.status).toBe(409);
      expect(await errorBody(res)).toMatchObject({
        code: 'subscription_disabled',
        message: expect.stringContaining('410 Gone from the subscriber'),
      });
      expect(batches).toEqual([]);
    });
  });

  describe('PATCH /admin/subscriptions/:id', () => {
    it("should record an operator's disable and announce it as subscription.disabled", async () => {
      const watcher = await createReceiverSubscription({ eventTypes: ['subscription.disabled'] });
      // A capability token in the URL's query: other subscribers must never see it.
      const target = await createReceiverSubscription({ query: { token: 'capability-token' } });
      const res = await patch(target.subscription.id, { enabled: false });
      const { health } = await dataOf(res);
      expect(health).toMatchObject({ state: 'disabled', reason: 'disabled by an operator' });
      expect(health.disabled_at).toBe(health.changed_at);
      const row = await env.DB.prepare(
        `SELECT e.event_id FROM deliveries AS d JOIN webhook_events AS e ON e.event_id = d.event_id
         WHERE d.subscription_id = ?1 AND ${bodySubscriptionIdSql('e')} = ?2`,
      )
        .bind(watcher.subscription.id, target.subscription.id)
        .first<{ event_id: string }>();
      const event = await findWebhookEvent(env.DB, row?.event_id ?? '');
      const url = new URL(target.subscription.url);
      expect(JSON.parse(event?.rawBody ?? '{}')).toMatchObject({
        event_type: 'subscription.disabled',
        data: {
          subscription_id: target.subscription.id,
          host: url.host,
          reason: 'disabled by an operator',
          disabled_at: health.disabled_at,
        },
      });
      // Named by id and host only: neither the path nor the query reaches another subscriber.
      expect(event?.rawBody).not.toContain('capability-token');
      expect(event?.rawBody).not.toContain(url.pathname);
      expect(JSON.parse(event?.rawBody ?? '{}').data).not.toHaveProperty('url');
    });

    it('should re-enqueue the pending deliveries and those failed since the failures began', async () => {
      // Its own type only: the events stored below fan out to nobody.
      const target = await createReceiverSubscription({ eventTypes: [`t_${crypto.randomUUID()}`] });
      const now = Date.now();
      const failingSince = now - 10 * HOUR_MS;
      const events = await Promise.all(
        [0, 1, 2, 3].map(() => storeEvent(`other_${crypto.randomUUID()}`)),
      );
      const rows = (
        [
          ['failed', now - 11 * HOUR_MS], // failed before the run: stays failed
          ['failed', now - 5 * HOUR_MS],
          ['pending', now - 4 * HOUR_MS],
          ['delivered', now - 3 * HOUR_MS],
        ] as const
      ).map(([status, at], index) => ({
        eventId: events[index]?.eventId ?? '',
        subscriptionId: target.subscription.id,
        status,
        createdAt: at,
      }));
      const [before, failed, pending, delivered] = await insertDeliveries(rows);
      // Disabled by the relay after its run of failures, as worker/relay/subscriber-health.ts does.
      await env.DB.prepare(
        `UPDATE subscriptions SET enabled = 0, failing_since = ?2, disabled_at = ?3,
           health_changed_at = ?3, health_reason = 'every attempt failed for 24 h' WHERE id = ?1`,
      )
        .bind(target.subscription.id, failingSince, now - HOUR_MS)
        .run();

      const { queue, batches } = recordingQueue();
      const res = await patch(
        target.subscription.id,
        { enabled: true, requeue_pending: true },
        queue,
      );
      expect(res.status).toBe(200);
      const data = await dataOf(res);
      expect(data.requeued).toBe(2);
      expect(data.health).toMatchObject({
        state: 'healthy',
        reason: 're-enabled by an operator',
        failing_since: null,
        disabled_at: null,
      });
      expect(sentIds(batches)).toEqual([failed, pending]);
      for (const id of [failed, pending]) {
        const delivery = await findDelivery(env.DB, id ?? '');
        expect(delivery?.status).toBe('pending');
        expect(delivery?.nextAttemptAt).toBeGreaterThanOrEqual(now);
      }
      expect((await findDelivery(env.DB, before ?? ''))?.status).toBe('failed');
      expect((await findDelivery(env.DB, delivered ?? ''))?.status).toBe('delivered');
      // The re-enqueued messages carry the operator's recovery.
      expect(batches.flat()[0]?.body).toMatchObject({ trigger: 'recover' });
    });

    it('should re-enqueue since the disable when an operator disabled a healthy one', async () => {
      const target = await createReceiverSubscription({ eventTypes: [`t_${crypto.randomUUID()}`] });
      const stored = await storeEvent(`other_${crypto.randomUUID()}`);
      const [earlier] = await insertDeliveries([
        {
          eventId: stored.eventId,
          subscriptionId: target.subscription.id,
          status: 'failed',
          createdAt: Date.now() - HOUR_MS,
        },
      ]);
      await patch(target.subscription.id, { enabled: false });
      const skipped = await storeDelivery();
      // A delivery the consumer skipped while its subscription was disabled.
      await env.DB.prepare(`UPDATE deliveries SET subscription_id = ?2 WHERE id = ?1`)
        .bind(skipped.deliveryId, target.subscription.id)
        .run();
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: skipped.deliveryId } }]);
      expect((await findDelivery(env.DB, skipped.deliveryId))?.status).toBe('failed');

      const { queue, batches } = recordingQueue();
      const res = await patch(
        target.subscription.id,
        { enabled: true, requeue_pending: true },
        queue,
      );
      expect((await dataOf(res)).requeued).toBe(1);
      expect(sentIds(batches)).toEqual([skipped.deliveryId]);
      expect((await findDelivery(env.DB, earlier ?? ''))?.status).toBe('failed');
    });

    it('should re-enqueue nothing for a subscription that was not disabled', async () => {
      const stored = await storeDelivery();
      const { queue, batches } = recordingQueue();
      const res = await patch(
        stored.subscription.id,
        { enabled: true, requeue_pending: true },
        queue,
      );
      expect((await dataOf(res)).requeued).toBe(0);
      expect(batches).toEqual([]);
    });
  });
});
