/**
 * `POST /admin/subscriptions/:id/test` (worker/routes/admin/subscription-test.ts): one signed
 * `subscription.test` event stored and delivered to that subscription only, whatever its
 * event types; refused for a disabled subscription (409) and an unknown one (404).
 */
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../../worker/relay/consumer.ts';
import { errorBody, fetchGateway, useCapturedLogs } from '../../helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
} from '../../relay/delivery-helpers.ts';
import { adminRequest, dataOf } from './admin-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const sendTest = (id: string, json?: unknown) =>
  fetchGateway(
    adminRequest('POST', `/admin/subscriptions/${encodeURIComponent(id)}/test`, {
      ...(json === undefined ? {} : { json }),
    }),
  );

describe('admin subscriptions', () => {
  describe('POST /admin/subscriptions/:id/test', () => {
    it('should deliver one signed subscription.test event to that subscription only', async () => {
      // Its filter names another type: a test goes to it anyway.
      const target = await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const listener = await createReceiverSubscription({ eventTypes: ['subscription.test'] });
      const everything = await createReceiverSubscription({ eventTypes: null });
      const res = await sendTest(target.subscription.id, { operator: 'ada@example.com' });
      expect(res.status).toBe(202);
      const data = await dataOf<{ event_id: string; delivery_id: string }>(res);
      expect(data.event_id).toMatch(/^subscription\.test:sub_/);
      const deliveries = await listEventDeliveries(env.DB, data.event_id);
      expect(deliveries.map((d) => [d.id, d.subscriptionId])).toEqual([
        [data.delivery_id, target.subscription.id],
      ]);
      const stored = await findWebhookEvent(env.DB, data.event_id);
      expect(stored?.eventType).toBe('subscription.test');

      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: data.delivery_id } }]);
      const [request, ...more] = await receivedUnder(target.key);
      expect(more).toEqual([]);
      if (request === undefined) throw new Error('the subscriber got nothing');
      expect(request.headers['webhook-id']).toBe(data.event_id);
      const payload = new Webhook(target.subscription.secret).verify(request.body, request.headers);
      expect(payload).toMatchObject({
        event_type: 'subscription.test',
        event_id: data.event_id,
        data: {
          subscription_id: target.subscription.id,
          host: new URL(target.subscription.url).host,
          operator: 'ada@example.com',
        },
      });
      const [delivered] = await listEventDeliveries(env.DB, data.event_id);
      expect(delivered?.status).toBe('delivered');
      for (const { key } of [listener, everything]) expect(await receivedUnder(key)).toEqual([]);
    });

    it('should make a new event of each test, with no body needed', async () => {
      const target = await createReceiverSubscription({ eventTypes: null });
      const first = await dataOf<{ event_id: string }>(await sendTest(target.subscription.id));
      const second = await dataOf<{ event_id: string }>(await sendTest(target.subscription.id));
      expect(second.event_id).not.toBe(first.event_id);
    });

    it('should answer 409 subscription_disabled for a disabled subscription, storing nothing', async () => {
      const target = await createReceiverSubscription({ enabled: false });
      const before = await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM webhook_events WHERE event_type = 'subscription.test'`,
      ).first<{ n: number }>();
      const res = await sendTest(target.subscription.id);
      expect(res.status).toBe(409);
      const body = await errorBody(res);
      expect(body.code).toBe('subscription_disabled');
      expect(body.message).toContain(target.subscription.id);
      const after = await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM webhook_events WHERE event_type = 'subscription.test'`,
      ).first<{ n: number }>();
      expect(after?.n).toBe(before?.n);
    });

    it('should answer 404 not_found for an unknown subscription', async () => {
      const res = await sendTest('sub_missing');
      expect(res.status).toBe(404);
      expect(await errorBody(res)).toMatchObject({
        code: 'not_found',
        message: 'No subscription "sub_missing"',
      });
    });

    it('should refuse an unknown body field with 400 validation_failed', async () => {
      const target = await createReceiverSubscription({ eventTypes: null });
      const res = await sendTest(target.subscription.id, { force: true });
      expect(res.status).toBe(400);
      expect((await errorBody(res)).code).toBe('validation_failed');
    });
  });
});
