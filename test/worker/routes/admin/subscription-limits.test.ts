/**
 * The delivery limits and ordering of a subscription (`max_per_second`, `max_in_flight`,
 * `ordered`) through the admin API and the real D1: accepted, stored, shown, changed and
 * cleared; refused with 400 `validation_failed` naming the field.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { errorBody, fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { adminRequest, createSubscription, dataOf } from './admin-helpers.ts';

useCapturedLogs();

async function storedLimits(id: string) {
  return env.DB.prepare(
    'SELECT max_per_second, max_in_flight, ordered FROM subscriptions WHERE id = ?1',
  )
    .bind(id)
    .first();
}

const patch = (id: string, json: unknown) =>
  fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }));

async function expectRefused(res: Response, path: string, message: string) {
  expect(res.status).toBe(400);
  const body = await errorBody(res);
  expect(body.code).toBe('validation_failed');
  expect(body.issues).toEqual([{ path, message: expect.stringContaining(message) }]);
}

describe('subscription limits', () => {
  describe('POST /admin/subscriptions', () => {
    it('should default to no rate limit, the default in-flight limit and no ordering', async () => {
      const created = await createSubscription();
      expect(created).toMatchObject({ max_per_second: null, max_in_flight: null, ordered: false });
      expect(await storedLimits(created.id)).toEqual({
        max_per_second: null,
        max_in_flight: null,
        ordered: 0,
      });
    });

    it('should store and show a decimal rate, an in-flight limit and ordering', async () => {
      const created = await createSubscription({
        max_per_second: 0.5,
        max_in_flight: 4,
        ordered: true,
      });
      expect(created).toMatchObject({ max_per_second: 0.5, max_in_flight: 4, ordered: true });
      expect(await storedLimits(created.id)).toEqual({
        max_per_second: 0.5,
        max_in_flight: 4,
        ordered: 1,
      });
      const res = await fetchGateway(adminRequest('GET', `/admin/subscriptions/${created.id}`));
      expect(await dataOf(res)).toMatchObject({
        max_per_second: 0.5,
        max_in_flight: 4,
        ordered: true,
      });
    });

    it('should accept the bounds', async () => {
      const low = await createSubscription({ max_per_second: 0.01, max_in_flight: 1 });
      const high = await createSubscription({ max_per_second: 1000, max_in_flight: 100 });
      expect(low).toMatchObject({ max_per_second: 0.01, max_in_flight: 1 });
      expect(high).toMatchObject({ max_per_second: 1000, max_in_flight: 100 });
    });

    it.each([
      ['max_per_second', 0, 'from 0.01 to 1000'],
      ['max_per_second', -1, 'from 0.01 to 1000'],
      ['max_per_second', 0.001, 'from 0.01 to 1000'],
      ['max_per_second', 1000.5, 'from 0.01 to 1000'],
      ['max_per_second', '5', 'Expected number'],
      ['max_in_flight', 0, 'whole number from 1 to 100'],
      ['max_in_flight', 101, 'whole number from 1 to 100'],
      ['max_in_flight', 1.5, 'whole number from 1 to 100'],
      ['max_in_flight', '3', 'Expected number'],
      ['ordered', 'yes', 'Expected boolean'],
      ['ordered', 1, 'Expected boolean'],
      ['ordered', null, 'Expected boolean'],
    ])('should refuse %s %j', async (field, value, message) => {
      const res = await fetchGateway(
        adminRequest('POST', '/admin/subscriptions', {
          json: { url: 'https://hooks.example.com/', [field]: value },
        }),
      );
      await expectRefused(res, field, message);
    });
  });

  describe('PATCH /admin/subscriptions/:id', () => {
    it('should set the limits, keep the other fields, then clear them with null', async () => {
      const created = await createSubscription({ description: 'ledger' });
      const set = await patch(created.id, { max_per_second: 25, max_in_flight: 2, ordered: true });
      expect(set.status).toBe(200);
      expect(await dataOf(set)).toMatchObject({
        description: 'ledger',
        max_per_second: 25,
        max_in_flight: 2,
        ordered: true,
      });
      const cleared = await patch(created.id, { max_per_second: null, max_in_flight: null });
      expect(await dataOf(cleared)).toMatchObject({
        max_per_second: null,
        max_in_flight: null,
        ordered: true,
      });
      expect(await storedLimits(created.id)).toEqual({
        max_per_second: null,
        max_in_flight: null,
        ordered: 1,
      });
    });

    it.each([
      ['max_per_second', 5000, 'from 0.01 to 1000'],
      ['max_in_flight', -2, 'whole number from 1 to 100'],
      ['ordered', 'true', 'Expected boolean'],
    ])('should refuse %s %j and change nothing', async (field, value, message) => {
      const created = await createSubscription({ max_per_second: 3 });
      await expectRefused(await patch(created.id, { [field]: value }), field, message);
      expect(await storedLimits(created.id)).toEqual({
        max_per_second: 3,
        max_in_flight: null,
        ordered: 0,
      });
    });

    it('should refuse requeue_pending without enabled: true', async () => {
      const created = await createSubscription();
      for (const json of [{ requeue_pending: true }, { enabled: false, requeue_pending: true }]) {
        const res = await patch(created.id, json);
        expect(res.status).toBe(400);
        const body = await errorBody(res);
        expect(body.code).toBe('validation_failed');
        expect(body.issues).toContainEqual({
          path: 'requeue_pending',
          message: 'Expected requeue_pending only with enabled: true',
        });
      }
    });
  });
});
