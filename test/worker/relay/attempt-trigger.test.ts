/**
 * Attempts say who started them: the trigger (`schedule`, `retry`, `replay`) and operator
 * recorded on each attempt, through the admin routes, the real DELIVERIES queue, the real
 * Worker's `queue` handler and D1, and shown by `GET /admin/events/:id`. (`recover` is
 * covered with the recovery jobs, test/worker/relay/recovery.test.ts.)
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeliveryAttemptRecord,
  listDeliveryAttempts,
} from '../../../worker/db/delivery-attempts.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { adminRequest, dataOf, expectValidationFailed } from '../routes/admin/admin-helpers.ts';
import {
  disableTestSubscriptions,
  recordingQueue,
  runQueue,
  storeDelivery,
} from './delivery-helpers.ts';
import { outboxOf, retryHeldNow } from './outbox-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** The attempts of a delivery once `count` are recorded (the real queue's consumer runs them). */
async function attemptsOnce(deliveryId: string, count: number): Promise<DeliveryAttemptRecord[]> {
  await expect
    .poll(async () => (await listDeliveryAttempts(env.DB, deliveryId)).length, {
      timeout: 5000,
      interval: 100,
    })
    .toBe(count);
  return listDeliveryAttempts(env.DB, deliveryId);
}

function retry(id: string, init: { json?: unknown; headers?: HeadersInit } = {}) {
  return adminRequest('POST', `/admin/deliveries/${encodeURIComponent(id)}/retry`, init);
}

function replay(eventId: string, init: { json?: unknown; headers?: HeadersInit } = {}) {
  return adminRequest('POST', `/admin/events/${encodeURIComponent(eventId)}/replay`, init);
}

describe('attempt trigger', () => {
  describe('queue (edgepay-deliveries)', () => {
    it("should record the relay's own attempt as schedule, without an operator", async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 204, trigger: 'schedule', operator: null },
      ]);
    });

    it("should record the operator's attempt with its trigger, and the scheduled retries after it as schedule", async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      const body = {
        deliveryId: stored.deliveryId,
        trigger: 'retry',
        operator: 'ada@example.com',
        requestedAt: Date.now(),
      };
      await runQueue(DELIVERIES_QUEUE, [{ body }]);
      // The retry after the 500, on the schedule of the subscription's outbox.
      await retryHeldNow(outboxOf(stored.subscription.id));
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 500, trigger: 'retry', operator: 'ada@example.com' },
        { attempt: 2, status: 500, trigger: 'schedule', operator: null },
      ]);
    });

    it('should keep the trigger for a message that came back without an attempt', async () => {
      const stored = await storeDelivery({ query: { status: '204' } });
      const body = {
        deliveryId: stored.deliveryId,
        trigger: 'recover',
        requestedAt: Date.now(),
      };
      // Its second delivery is its first attempt (the first ended before sending).
      await runQueue(DELIVERIES_QUEUE, [{ body, attempts: 2 }]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, trigger: 'recover', operator: null },
      ]);
    });

    it('should record an attempt that started before the request as schedule', async () => {
      const stored = await storeDelivery({ query: { status: '500' } });
      await runQueue(DELIVERIES_QUEUE, [
        {
          body: {
            deliveryId: stored.deliveryId,
            trigger: 'retry',
            operator: 'ada',
            requestedAt: Date.now() + 60_000,
          },
        },
      ]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, trigger: 'schedule', operator: null },
      ]);
    });

    it.each([
      ['an unknown trigger', { trigger: 'cron', requestedAt: 1 }],
      ['a trigger without its time', { trigger: 'retry' }],
      ['the schedule named as a request', { trigger: 'schedule', requestedAt: 1 }],
    ])('should record %s as schedule', async (_, fields) => {
      const stored = await storeDelivery({ query: { status: '204' } });
      await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId, operator: 'ada', ...fields } },
      ]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, trigger: 'schedule', operator: null },
      ]);
    });
  });

  describe('POST /admin/deliveries/:id/retry', () => {
    it('should record the attempt it causes as retry with the operator of the body', async () => {
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(retry(deliveryId, { json: { operator: 'Ada Lovelace' } }));
      expect(res.status).toBe(202);
      // The test bindings refuse the loopback receiver: the refusal is the recorded attempt.
      expect(await attemptsOnce(deliveryId, 1)).toMatchObject([
        { attempt: 1, status: null, trigger: 'retry', operator: 'Ada Lovelace' },
      ]);
    });

    it('should record retry without an operator for a bare POST', async () => {
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(retry(deliveryId));
      expect(res.status).toBe(202);
      expect(await attemptsOnce(deliveryId, 1)).toMatchObject([
        { attempt: 1, trigger: 'retry', operator: null },
      ]);
    });

    it('should take the Cloudflare Access user over the body', async () => {
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(
        retry(deliveryId, {
          json: { operator: 'typed name' },
          headers: { 'Cf-Access-Authenticated-User-Email': 'grace@example.com' },
        }),
      );
      expect(res.status).toBe(202);
      expect(await attemptsOnce(deliveryId, 1)).toMatchObject([
        { trigger: 'retry', operator: 'grace@example.com' },
      ]);
    });

    it.each([
      ['empty', ''],
      ['longer than 100 characters', 'a'.repeat(101)],
      ['a control character', 'ada\nroot'],
    ])('should refuse an operator that is %s with 400 naming it', async (_, operator) => {
      const { queue, batches } = recordingQueue();
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(retry(deliveryId, { json: { operator } }), {
        DELIVERIES: queue,
      });
      await expectValidationFailed(res, ['operator']);
      expect(batches).toEqual([]);
    });

    it('should refuse an unknown body field with 400 naming it', async () => {
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(retry(deliveryId, { json: { operater: 'ada' } }));
      await expectValidationFailed(res, ['operater']);
    });

    it('should refuse an Access header that is not printable ASCII with 400 naming it', async () => {
      const { queue, batches } = recordingQueue();
      const { deliveryId } = await storeDelivery();
      const res = await fetchGateway(
        retry(deliveryId, {
          headers: { 'Cf-Access-Authenticated-User-Email': 'x'.repeat(101) },
        }),
        { DELIVERIES: queue },
      );
      await expectValidationFailed(res, ['Cf-Access-Authenticated-User-Email']);
      expect(batches).toEqual([]);
    });
  });

  describe('POST /admin/events/:id/replay', () => {
    it('should record the attempt it causes as replay with the operator, shown by GET /admin/events/:id', async () => {
      const { eventId, deliveryId } = await storeDelivery();
      const res = await fetchGateway(replay(eventId, { json: { operator: 'ops-bot' } }));
      expect(res.status).toBe(202);
      await attemptsOnce(deliveryId, 1);
      const event = await dataOf<{
        deliveries: { id: string; attempt_log: { trigger: string; operator: string | null }[] }[];
      }>(await fetchGateway(adminRequest('GET', `/admin/events/${encodeURIComponent(eventId)}`)));
      expect(event.deliveries).toMatchObject([
        { id: deliveryId, attempt_log: [{ trigger: 'replay', operator: 'ops-bot' }] },
      ]);
    });

    it('should record replay without an operator for a bare POST', async () => {
      const { eventId, deliveryId } = await storeDelivery();
      const res = await fetchGateway(replay(eventId));
      expect(res.status).toBe(202);
      expect(await attemptsOnce(deliveryId, 1)).toMatchObject([
        { trigger: 'replay', operator: null },
      ]);
    });
  });
});
