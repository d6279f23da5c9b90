/** D1 queries on `deliveries` and `delivery_attempts` (worker/db/deliveries.ts, worker/db/delivery-attempts.ts), real D1. */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fanOutDeliveriesStatement,
  findDelivery,
  markDeliveryFailed,
  toDeliveryRecord,
} from '../../../worker/db/deliveries.ts';
import {
  type AttemptOutcome,
  listDeliveryAttempts,
  recordDeliveryAttempt,
} from '../../../worker/db/delivery-attempts.ts';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  storeDelivery,
} from '../relay/delivery-helpers.ts';

afterEach(disableTestSubscriptions);

const NOW = 1_900_000_000_000;

function outcome(overrides: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    startedAt: NOW,
    status: 500,
    latencyMs: 12,
    error: null,
    responseExcerpt: 'oops',
    deliveryStatus: 'pending',
    nextAttemptAt: NOW + 5000,
    ...overrides,
  };
}

describe('deliveries db', () => {
  describe('fanOutDeliveriesStatement', () => {
    it('should write nothing when the stored event carries another received_at (a duplicate)', async () => {
      const eventType = `db_${crypto.randomUUID()}`;
      await createReceiverSubscription({ eventTypes: [eventType] });
      const event = {
        eventId: `evt_${crypto.randomUUID()}`,
        eventType,
        receivedAt: NOW,
        reference: null,
        rawBody: '{}',
      };
      await (await insertWebhookEventStatement(env.DB, event)).run();
      const again = { ...event, receivedAt: NOW + 1 };
      const [insert, fanOut] = await env.DB.batch<{ id: string }>([
        await insertWebhookEventStatement(env.DB, again),
        fanOutDeliveriesStatement(env.DB, again),
      ]);
      expect(insert?.meta.changes).toBe(0);
      expect(fanOut?.results).toEqual([]);
    });
  });

  describe('recordDeliveryAttempt', () => {
    it('should number attempts from 1 and update the delivery', async () => {
      const { deliveryId } = await storeDelivery();
      await recordDeliveryAttempt(env.DB, deliveryId, outcome(), NOW);
      await recordDeliveryAttempt(
        env.DB,
        deliveryId,
        outcome({ status: 200, deliveryStatus: 'delivered', nextAttemptAt: null }),
        NOW + 1,
      );
      expect(
        (await listDeliveryAttempts(env.DB, deliveryId)).map((a) => [a.attempt, a.status]),
      ).toEqual([
        [1, 500],
        [2, 200],
      ]);
      expect(await findDelivery(env.DB, deliveryId)).toMatchObject({
        status: 'delivered',
        attempts: 2,
        lastStatus: 200,
        nextAttemptAt: null,
        updatedAt: NOW + 1,
      });
    });

    it('should keep a delivered delivery delivered after a late failure', async () => {
      const { deliveryId } = await storeDelivery();
      await recordDeliveryAttempt(
        env.DB,
        deliveryId,
        outcome({ status: 200, deliveryStatus: 'delivered', nextAttemptAt: null }),
        NOW,
      );
      await recordDeliveryAttempt(env.DB, deliveryId, outcome(), NOW + 1);
      expect(await findDelivery(env.DB, deliveryId)).toMatchObject({
        status: 'delivered',
        attempts: 2,
        nextAttemptAt: null,
      });
    });
  });

  describe('response excerpt', () => {
    /** How the excerpt of a delivery's only attempt is stored: its type and its bytes. */
    async function storedExcerpt(deliveryId: string) {
      return env.DB.prepare(
        `SELECT typeof(response_excerpt) AS type, length(CAST(response_excerpt AS BLOB)) AS bytes
         FROM delivery_attempts WHERE delivery_id = ?1`,
      )
        .bind(deliveryId)
        .first<{ type: string; bytes: number }>();
    }

    it('should store at most 2048 bytes of a huge answer, however it encodes', async () => {
      // A megabyte of noise, and an answer of bytes that are not UTF-8 as the reader decodes
      // them (U+FFFD, 3 bytes each once stored as text).
      const noise = Array.from({ length: 16 }, () =>
        Array.from(crypto.getRandomValues(new Uint8Array(65_536)), (n) =>
          String.fromCharCode(0x21 + (n % 94)),
        ).join(''),
      ).join('');
      for (const answer of [noise, '\ufffd'.repeat(2048)]) {
        const { deliveryId } = await storeDelivery();
        await recordDeliveryAttempt(env.DB, deliveryId, outcome({ responseExcerpt: answer }), NOW);
        const form = await storedExcerpt(deliveryId);
        expect(form?.bytes).toBeLessThanOrEqual(2048);
        const [attempt] = await listDeliveryAttempts(env.DB, deliveryId);
        const kept = attempt?.responseExcerpt ?? '';
        expect(answer.startsWith(kept)).toBe(true);
        expect(new TextEncoder().encode(kept).byteLength).toBeLessThanOrEqual(2048);
        expect(new TextEncoder().encode(kept).byteLength).toBeGreaterThan(2045);
      }
    });

    it('should store a long answer compressed and give it back exactly', async () => {
      const page = `<html><body><h1>502 Bad Gateway</h1>${'<p>upstream timed out</p>'.repeat(40)}</body></html>`;
      const { deliveryId } = await storeDelivery();
      await recordDeliveryAttempt(env.DB, deliveryId, outcome({ responseExcerpt: page }), NOW);
      const form = await storedExcerpt(deliveryId);
      expect(form?.type).toBe('blob');
      expect(form?.bytes).toBeLessThan(page.length / 4);
      expect((await listDeliveryAttempts(env.DB, deliveryId))[0]?.responseExcerpt).toBe(page);
    });
  });

  describe('markDeliveryFailed', () => {
    it('should mark a pending delivery and report it', async () => {
      const { deliveryId } = await storeDelivery();
      expect(await markDeliveryFailed(env.DB, deliveryId, NOW)).toBe(true);
      expect(await findDelivery(env.DB, deliveryId)).toMatchObject({
        status: 'failed',
        updatedAt: NOW,
      });
    });

    it('should leave a settled or missing delivery and report false', async () => {
      const { deliveryId } = await storeDelivery();
      await markDeliveryFailed(env.DB, deliveryId, NOW);
      expect(await markDeliveryFailed(env.DB, deliveryId, NOW + 1)).toBe(false);
      expect(await markDeliveryFailed(env.DB, 'dlv_missing', NOW)).toBe(false);
    });
  });

  describe('toDeliveryRecord', () => {
    it('should refuse an unknown status', () => {
      const row = {
        id: 'dlv_x',
        event_id: 'evt_x',
        subscription_id: 'sub_x',
        status: 'sent',
        attempts: 0,
        next_attempt_at: null,
        last_status: null,
        created_at: NOW,
        updated_at: NOW,
      };
      expect(() => toDeliveryRecord(row)).toThrow('unknown delivery status sent');
    });
  });
});
