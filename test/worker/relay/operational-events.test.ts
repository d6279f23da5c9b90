/**
 * The relay's own events (worker/relay/operational-events.ts): stored like the payment
 * service's, delivered signed only to the subscriptions that list the type, never to the
 * subscription they are about, once per id however often the emitter runs.
 */
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { emitOperationalEvent } from '../../../worker/relay/operational-events.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
} from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const deadLettered = (subscriptionId: string, deliveryId = `dlv_${crypto.randomUUID()}`) => ({
  delivery_id: deliveryId,
  event_id: `evt_${crypto.randomUUID()}`,
  event_type: 'charge_success',
  subscription_id: subscriptionId,
  attempts: 8,
  last_status: 500,
  dead_lettered_at: '2026-11-27T08:00:00.000Z',
});

describe('operational events', () => {
  describe('emitOperationalEvent', () => {
    it('should deliver only to subscriptions listing the type, never to its subject', async () => {
      const subject = await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      const listener = await createReceiverSubscription({
        eventTypes: ['charge_success', 'delivery.dead_lettered'],
      });
      const everything = await createReceiverSubscription({ eventTypes: null });
      const other = await createReceiverSubscription({ eventTypes: ['relay.backlog'] });
      const disabled = await createReceiverSubscription({
        eventTypes: ['delivery.dead_lettered'],
        enabled: false,
      });
      const data = deadLettered(subject.subscription.id);
      const emitted = await emitOperationalEvent(env, { type: 'delivery.dead_lettered', data });
      expect(emitted.stored).toBe(true);
      expect(emitted.eventId).toBe(`delivery.dead_lettered:${data.delivery_id}:8`);
      const deliveries = await listEventDeliveries(env.DB, emitted.eventId);
      expect(deliveries.map((d) => d.subscriptionId)).toEqual([listener.subscription.id]);
      expect(emitted.deliveryIds).toEqual([deliveries[0]?.id]);
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: emitted.deliveryIds[0] } }]);
      const [request, ...more] = await receivedUnder(listener.key);
      expect(more).toEqual([]);
      if (request === undefined) throw new Error('the listener got nothing');
      expect(request.headers['webhook-id']).toBe(emitted.eventId);
      const payload = new Webhook(listener.subscription.secret).verify(
        request.body,
        request.headers,
      );
      expect(payload).toMatchObject({
        event_type: 'delivery.dead_lettered',
        event_id: emitted.eventId,
        data,
      });
      for (const { key } of [subject, everything, other, disabled]) {
        expect(await receivedUnder(key)).toEqual([]);
      }
    });

    it('should store the event as received, with no reference and no confirmation', async () => {
      const emitted = await emitOperationalEvent(env, {
        type: 'relay.backlog',
        now: Date.parse('2026-11-27T08:30:00Z'),
        data: {
          oldest_delivery_id: 'dlv_x',
          oldest_event_id: 'evt_x',
          oldest_subscription_id: 'sub_x',
          oldest_due_at: '2026-11-27T08:00:00.000Z',
          age_seconds: 1800,
          threshold_seconds: 900,
          due_deliveries: 3,
        },
      });
      expect(emitted.eventId).toBe('relay.backlog:2026-11-27T08:00:00.000Z');
      const stored = await findWebhookEvent(env.DB, emitted.eventId);
      expect(stored).toMatchObject({ eventType: 'relay.backlog', status: 'received' });
      expect(stored?.reference).toBeNull();
      expect(stored?.confirmation).toBeUndefined();
      expect(JSON.parse(stored?.rawBody ?? '')).toMatchObject({
        timestamp: '2026-11-27T08:30:00.000Z',
        message: 'Relay backlog',
      });
    });

    it('should store and deliver an event once when its emitter runs twice', async () => {
      const listener = await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      const data = deadLettered('sub_elsewhere');
      const first = await emitOperationalEvent(env, { type: 'delivery.dead_lettered', data });
      const again = await emitOperationalEvent(env, {
        type: 'delivery.dead_lettered',
        data: { ...data, dead_lettered_at: '2026-11-27T09:00:00.000Z' },
      });
      expect(first.deliveryIds).toHaveLength(1);
      expect(again).toEqual({ eventId: first.eventId, stored: false, deliveryIds: [] });
      const deliveries = await listEventDeliveries(env.DB, first.eventId);
      expect(deliveries.map((d) => d.subscriptionId)).toEqual([listener.subscription.id]);
    });

    it('should leave out the subject named apart from the data', async () => {
      const subject = await createReceiverSubscription({ eventTypes: ['event.unconfirmed'] });
      const emitted = await emitOperationalEvent(env, {
        type: 'event.unconfirmed',
        subjectSubscriptionId: subject.subscription.id,
        data: {
          event_id: `evt_${crypto.randomUUID()}`,
          event_type: 'charge_success',
          reference: null,
          reason: 'amount 10 is not 20',
          checks: 1,
          unconfirmed_at: '2026-11-27T08:00:00.000Z',
        },
      });
      expect(emitted.deliveryIds).toEqual([]);
    });

    it('should hash an id that would be longer than 255 characters', async () => {
      const emitted = await emitOperationalEvent(env, {
        type: 'event.unconfirmed',
        data: {
          event_id: 'e'.repeat(255),
          event_type: 'charge_success',
          reference: 'ref',
          reason: 'status failed',
          checks: 1,
          unconfirmed_at: '2026-11-27T08:00:00.000Z',
        },
      });
      expect(emitted.eventId).toMatch(/^event\.unconfirmed:sha256:[0-9a-f]{64}$/);
    });

    it('should be replayed like it was raised: to listeners only, unless a subscription is named', async () => {
      const subject = await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      const listener = await createReceiverSubscription({ eventTypes: ['delivery.dead_lettered'] });
      await createReceiverSubscription({ eventTypes: null });
      const emitted = await emitOperationalEvent(env, {
        type: 'delivery.dead_lettered',
        data: deadLettered(subject.subscription.id),
      });
      const replay = async (json?: unknown) => {
        const path = `/admin/events/${encodeURIComponent(emitted.eventId)}/replay`;
        const res = await fetchGateway(
          adminRequest('POST', path, json === undefined ? {} : { json }),
        );
        expect(res.status).toBe(202);
        const { delivery_ids } = await dataOf<{ delivery_ids: string[] }>(res);
        const deliveries = await listEventDeliveries(env.DB, emitted.eventId);
        return delivery_ids.map((id) => deliveries.find((d) => d.id === id)?.subscriptionId);
      };
      expect(await replay()).toEqual([listener.subscription.id]);
      expect(await replay({ subscription_id: subject.subscription.id })).toEqual([
        subject.subscription.id,
      ]);
    });

    it('should refuse data that does not fit the type', async () => {
      const data = { subscription_id: 'sub_x' } as never;
      await expect(
        emitOperationalEvent(env, { type: 'subscription.disabled', data }),
      ).rejects.toThrow();
    });
  });
});
