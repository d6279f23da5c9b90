/**
 * The admin API's delivery routes (`/admin/deliveries`) through the real
 * Worker, D1 and DELIVERIES queue: counts by status, and retry of one delivery.
 * `DELIVERIES` is wrapped so its `sendBatch` calls are recorded while still reaching
 * the real queue (whose consumer then runs).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../../worker/db/delivery-attempts.ts';
import { errorBody, fetchGateway, gatewayRequest, useCapturedLogs } from '../../helpers.ts';
import { disableTestSubscriptions, storeDelivery } from '../../relay/delivery-helpers.ts';
import { adminRequest, dataOf } from './admin-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

interface Counts {
  pending: number;
  delivered: number;
  failed: number;
  total: number;
}

/** The real DELIVERIES producer, with every message id sent recorded. */
function recordedDeliveries(): { queue: Queue; sent: string[] } {
  const sent: string[] = [];
  const real = env.DELIVERIES;
  const queue: Queue = {
    metrics: () => real.metrics(),
    send: async (body, options) => {
      sent.push((body as { deliveryId: string }).deliveryId);
      return real.send(body, options);
    },
    sendBatch: async (messages, options) => {
      for (const m of messages) sent.push((m.body as { deliveryId: string }).deliveryId);
      return real.sendBatch(messages, options);
    },
  };
  return { queue, sent };
}

async function setStatus(id: string, status: string): Promise<void> {
  await env.DB.prepare(
    'UPDATE deliveries SET status = ?2, attempts = 3, next_attempt_at = NULL WHERE id = ?1',
  )
    .bind(id, status)
    .run();
}

async function counts(): Promise<Counts> {
  const res = await fetchGateway(adminRequest('GET', '/admin/deliveries/counts'));
  expect(res.status).toBe(200);
  return dataOf<Counts>(res);
}

function retry(id: string, overrides: Partial<Env> = {}): Promise<Response> {
  return fetchGateway(
    adminRequest('POST', `/admin/deliveries/${encodeURIComponent(id)}/retry`),
    overrides,
  );
}

describe('admin deliveries API', () => {
  describe('GET /admin/deliveries/counts', () => {
    it('should count deliveries by status, as stored', async () => {
      await storeDelivery();
      const { results } = await env.DB.prepare(
        'SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status',
      ).all<{ status: string; n: number }>();
      const stored = Object.fromEntries(results.map((r) => [r.status, r.n]));
      const answered = await counts();
      expect(answered).toEqual({
        pending: stored.pending ?? 0,
        delivered: stored.delivered ?? 0,
        failed: stored.failed ?? 0,
        total: results.reduce((sum, r) => sum + r.n, 0),
      });
      expect(answered.pending).toBeGreaterThan(0);
    });

    it('should move a delivery between counts when its status changes', async () => {
      const { deliveryId } = await storeDelivery();
      const before = await counts();
      await setStatus(deliveryId, 'failed');
      const after = await counts();
      expect(after).toEqual({
        ...before,
        pending: before.pending - 1,
        failed: before.failed + 1,
      });
    });

    it('should refuse a request without the admin token', async () => {
      const res = await fetchGateway(gatewayRequest('/admin/deliveries/counts', { token: null }));
      expect(res.status).toBe(401);
    });
  });

  describe('POST /admin/deliveries/:id/retry', () => {
    it.each(['failed', 'delivered'])(
      'should reset a %s delivery to pending, keep its attempts and enqueue it',
      async (status) => {
        const { deliveryId } = await storeDelivery();
        await setStatus(deliveryId, status);
        const { queue, sent } = recordedDeliveries();
        const startedAt = Date.now();

        const res = await retry(deliveryId, { DELIVERIES: queue });

        expect(res.status).toBe(202);
        const data = await dataOf<{
          id: string;
          status: string;
          attempts: number;
          next_attempt_at: string;
        }>(res);
        expect(data).toMatchObject({ id: deliveryId, status: 'pending', attempts: 3 });
        expect(Date.parse(data.next_attempt_at)).toBeGreaterThanOrEqual(startedAt);
        expect(sent).toEqual([deliveryId]);
        const stored = await findDelivery(env.DB, deliveryId);
        expect(stored?.attempts).toBe(3);
        // The test bindings refuse the loopback receiver: the consumer's recorded refusal
        // (attempt 4) shows the message reached the real queue.
        await expect
          .poll(
            async () => (await listDeliveryAttempts(env.DB, deliveryId)).map((a) => a.attempt),
            {
              timeout: 5000,
              interval: 100,
            },
          )
          .toEqual([4]);
      },
    );

    it('should answer 404 not_found for an unknown delivery and enqueue nothing', async () => {
      const { queue, sent } = recordedDeliveries();
      const res = await retry('dlv_missing', { DELIVERIES: queue });
      expect(res.status).toBe(404);
      const body = await errorBody(res);
      expect(body.code).toBe('not_found');
      expect(body.message).toContain('dlv_missing');
      expect(sent).toEqual([]);
    });

    it('should answer 500 when the queue refuses, leaving the delivery pending for the sweeper', async () => {
      const { deliveryId } = await storeDelivery();
      await setStatus(deliveryId, 'failed');
      const failing: Queue = {
        ...env.DELIVERIES,
        metrics: () => env.DELIVERIES.metrics(),
        send: async () => Promise.reject(new Error('queue down')),
        sendBatch: async () => Promise.reject(new Error('queue down')),
      };
      const res = await retry(deliveryId, { DELIVERIES: failing });
      expect(res.status).toBe(500);
      expect((await errorBody(res)).code).toBe('internal_error');
      expect((await findDelivery(env.DB, deliveryId))?.status).toBe('pending');
    });
  });
});
