/**
 * Event bodies and answer excerpts stored compactly (worker/db/compact-body.ts), through the
 * relay's real paths: the consumer delivers a compressed body byte for byte and keeps a bounded
 * excerpt of a real subscriber's answer over HTTP (the receiver of test/global-setup.ts), and
 * ordered delivery compares the timestamps of compressed bodies and of bodies stored as text
 * before compression existed.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { fanOutDeliveriesStatement } from '../../../worker/db/deliveries.ts';
import {
  listDeliveryAttempts,
  RESPONSE_EXCERPT_MAX_BYTES,
} from '../../../worker/db/delivery-attempts.ts';
import { findDeliveryOrder } from '../../../worker/db/delivery-order.ts';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import { envelope } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
  storeDelivery,
} from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** `typeof()` of the stored body of an event. */
async function bodyType(eventId: string): Promise<string | undefined> {
  const row = await env.DB.prepare(
    'SELECT typeof(raw_body) AS type FROM webhook_events WHERE event_id = ?1',
  )
    .bind(eventId)
    .first<{ type: string }>();
  return row?.type;
}

describe('compact storage', () => {
  describe('delivery of a compressed body', () => {
    it('should POST the stored body byte for byte', async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      expect(await bodyType(stored.eventId)).toBe('blob');
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const [request] = await receivedUnder(stored.key);
      expect(new TextEncoder().encode(request?.body)).toEqual(
        new TextEncoder().encode(stored.rawBody),
      );
    });
  });

  describe('answer excerpt', () => {
    it('should keep a multi-byte answer to whole characters within 2048 bytes', async () => {
      // U+20AC is 3 bytes: the first 2048 bytes read end inside the 683rd, which decodes to
      // U+FFFD (3 more bytes); the kept excerpt stops after the 682nd (2046 bytes).
      const stored = await storeDelivery({
        query: { status: '500', body_prefix: '\u20ac'.repeat(1000) },
      });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      const [attempt] = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempt?.responseExcerpt).toBe('\u20ac'.repeat(682));
      const row = await env.DB.prepare(
        'SELECT length(CAST(response_excerpt AS BLOB)) AS bytes FROM delivery_attempts WHERE delivery_id = ?1',
      )
        .bind(stored.deliveryId)
        .first<{ bytes: number }>();
      expect(row?.bytes).toBeLessThanOrEqual(RESPONSE_EXCERPT_MAX_BYTES);
    });
  });

  describe('ordered delivery', () => {
    const reference = () => `pay_${crypto.randomUUID()}`;

    /** Stores an event at the provider's `timestamp`, compressed as the ingress stores it, with its fan-out. */
    async function storeCompressed(eventType: string, ref: string, timestamp: string) {
      const body = envelope({ event_type: eventType, timestamp, data: { reference: ref } });
      const event = {
        eventId: body.event_id as string,
        eventType,
        receivedAt: Date.now(),
        reference: ref,
        rawBody: JSON.stringify(body),
      };
      const [, fanOut] = await env.DB.batch<{ id: string }>([
        await insertWebhookEventStatement(env.DB, event),
        fanOutDeliveriesStatement(env.DB, event),
      ]);
      expect(await bodyType(event.eventId)).toBe('blob');
      return fanOut?.results[0]?.id ?? '';
    }

    /** Stores an event as rows written before compression existed: the body as text. */
    async function storeAsText(eventType: string, ref: string, timestamp: string, to: string) {
      const body = envelope({ event_type: eventType, timestamp, data: { reference: ref } });
      const eventId = body.event_id as string;
      const deliveryId = `dlv_${crypto.randomUUID()}`;
      const now = Date.now() + 60_000;
      await env.DB.batch([
        env.DB.prepare(
          `INSERT INTO webhook_events (event_id, event_type, received_at, raw_body, reference)
           VALUES (?1, ?2, ?3, ?4, ?5)`,
        ).bind(eventId, eventType, now, JSON.stringify(body), ref),
        env.DB.prepare(
          `INSERT INTO deliveries (id, event_id, subscription_id, created_at, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?4)`,
        ).bind(deliveryId, eventId, to, now),
      ]);
      expect(await bodyType(eventId)).toBe('text');
      return deliveryId;
    }

    it('should order compressed bodies by their timestamp, not by their receipt', async () => {
      const type = `test_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [type] });
      const ref = reference();
      const later = await storeCompressed(type, ref, '2030-01-01T00:00:02.000Z');
      const earlier = await storeCompressed(type, ref, '2030-01-01T00:00:01.000Z');
      expect(await findDeliveryOrder(env.DB, later)).toEqual({ reference: ref, blocked: true });
      expect(await findDeliveryOrder(env.DB, earlier)).toEqual({ reference: ref, blocked: false });
    });

    it('should order a compressed body after an earlier one stored as text, and the reverse', async () => {
      const type = `test_${crypto.randomUUID()}`;
      const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
      const ref = reference();
      const compressed = await storeCompressed(type, ref, '2030-01-01T00:00:02.000Z');
      const text = await storeAsText(type, ref, '2030-01-01T00:00:01.000Z', subscription.id);
      expect(await findDeliveryOrder(env.DB, compressed)).toEqual({
        reference: ref,
        blocked: true,
      });
      expect(await findDeliveryOrder(env.DB, text)).toEqual({ reference: ref, blocked: false });
      const ref2 = reference();
      const text2 = await storeAsText(type, ref2, '2030-01-01T00:00:03.000Z', subscription.id);
      const compressed2 = await storeCompressed(type, ref2, '2030-01-01T00:00:01.000Z');
      expect(await findDeliveryOrder(env.DB, text2)).toEqual({ reference: ref2, blocked: true });
      expect(await findDeliveryOrder(env.DB, compressed2)).toEqual({
        reference: ref2,
        blocked: false,
      });
    });
  });
});
