/**
 * The event-type catalog: `GET /admin/event-types` (every type the relay knows, with the
 * JSON Schema of its data derived from the SDK's webhook schemas), and subscriptions refusing
 * a type it does not list unless `allow_custom_event_types` is true.
 */
import { describe, expect, it } from 'vitest';
import { errorBody, fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { adminRequest, createSubscription, dataOf } from './admin-helpers.ts';

useCapturedLogs();

interface EventTypeData {
  type: string;
  origin: string;
  description: string;
  data_schema: {
    type: string;
    properties: Record<string, unknown>;
    required: string[];
    additionalProperties?: boolean;
  };
}

async function catalog(): Promise<EventTypeData[]> {
  const res = await fetchGateway(adminRequest('GET', '/admin/event-types'));
  expect(res.status).toBe(200);
  return dataOf<EventTypeData[]>(res);
}

const create = (json: Record<string, unknown>) =>
  fetchGateway(
    adminRequest('POST', '/admin/subscriptions', {
      json: { url: 'https://hooks.example.com/edgepay', ...json },
    }),
  );

const patch = (id: string, json: Record<string, unknown>) =>
  fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }));

describe('event-type catalog', () => {
  describe('GET /admin/event-types', () => {
    it('should answer with the admin token only', async () => {
      const res = await fetchGateway(adminRequest('GET', '/admin/event-types', { token: 'nope' }));
      expect(res.status).toBe(401);
      expect((await fetchGateway(adminRequest('GET', '/admin/event-types'))).status).toBe(200);
    });

    it("should list the spec's types, the sandbox's and the relay's own, each described once", async () => {
      const types = await catalog();
      const byOrigin = (origin: string) =>
        types.filter((entry) => entry.origin === origin).map((entry) => entry.type);
      expect(byOrigin('spec')).toEqual([
        'charge_success',
        'disbursement_success',
        'direct_debit_success',
        'direct_debit_failure',
        'mandate_activated',
      ]);
      expect(byOrigin('sandbox')).toEqual([
        'disbursement_failed',
        'disbursement_expired',
        'disbursement_reversed',
        'refund_success',
        'refund_failed',
        'virtual_account_credit',
      ]);
      expect(byOrigin('relay')).toEqual([
        'subscription.disabled',
        'delivery.dead_lettered',
        'event.unconfirmed',
        'relay.backlog',
        'subscription.test',
      ]);
      expect(new Set(types.map((entry) => entry.type)).size).toBe(types.length);
      for (const entry of types) expect(entry.description).toMatch(/^\S.{10,120}$/);
    });

    it("should publish the SDK's webhook data schemas as JSON Schema", async () => {
      const types = new Map((await catalog()).map((entry) => [entry.type, entry.data_schema]));
      // lib/webhooks.ts: a money event's data is reference, amount, currency (metadata optional).
      expect(types.get('charge_success')).toEqual({
        type: 'object',
        properties: {
          reference: { type: 'string' },
          amount: { type: 'number' },
          currency: { type: 'string' },
          metadata: {},
        },
        required: ['reference', 'amount', 'currency'],
        additionalProperties: true,
      });
      expect(types.get('disbursement_reversed')).toEqual(types.get('disbursement_success'));
      expect(types.get('direct_debit_success')?.required).toEqual([
        'payment_reference',
        'mandate_reference',
        'debit_amount',
        'status',
      ]);
      // Types the SDK reads as generic events: an open object.
      expect(types.get('refund_success')).toMatchObject({
        type: 'object',
        additionalProperties: true,
      });
      expect(types.get('delivery.dead_lettered')?.properties.dead_lettered_at).toEqual({
        type: 'string',
        format: 'date-time',
      });
    });
  });

  describe('POST /admin/subscriptions', () => {
    it('should refuse a misspelt type, naming its index and the closest known type', async () => {
      const res = await create({ event_types: ['charge_success', 'disbursment_success'] });
      expect(res.status).toBe(400);
      const body = await errorBody(res);
      expect(body.code).toBe('validation_failed');
      expect(body.issues).toEqual([
        {
          path: 'event_types.1',
          message: expect.stringContaining(
            'Unknown event type "disbursment_success": did you mean disbursement_success?',
          ),
        },
      ]);
      expect(body.issues?.[0]?.message).toContain('allow_custom_event_types');
    });

    it('should name the index the caller sent, repeats included', async () => {
      const res = await create({ event_types: ['charge_success', 'charge_success', 'nope_x'] });
      const body = await errorBody(res);
      expect(body.issues?.map((issue) => issue.path)).toEqual(['event_types.2']);
    });

    it('should suggest nothing for a type far from every known one', async () => {
      const body = await errorBody(await create({ event_types: ['orders.created'] }));
      expect(body.issues?.[0]?.message).toMatch(/^Unknown event type "orders.created" \(GET/);
    });

    it('should list an unknown type beside the other issues of the body', async () => {
      const body = await errorBody(await create({ event_types: ['refund_sucess'], enabled: 1 }));
      expect(body.issues?.map((issue) => issue.path)).toEqual(['enabled', 'event_types.0']);
    });

    it('should accept every catalog type, and a custom one with allow_custom_event_types', async () => {
      const known = await createSubscription({
        event_types: ['disbursement_reversed', 'relay.backlog'],
      });
      expect(known.event_types).toEqual(['disbursement_reversed', 'relay.backlog']);
      const custom = await createSubscription({
        event_types: ['orders.created', 'charge_success', 'orders.created'],
        allow_custom_event_types: true,
      });
      expect(custom.event_types).toEqual(['orders.created', 'charge_success']);
    });

    it('should still refuse the unknown type with allow_custom_event_types false', async () => {
      const res = await create({
        event_types: ['orders.created'],
        allow_custom_event_types: false,
      });
      const body = await errorBody(res);
      expect(body.issues?.map((issue) => issue.path)).toEqual(['event_types.0']);
    });
  });

  describe('PATCH /admin/subscriptions/:id', () => {
    it('should refuse a misspelt type with a suggestion, and take it with the flag', async () => {
      const { id } = await createSubscription({ event_types: ['charge_success'] });
      const refused = await errorBody(await patch(id, { event_types: ['mandate_activatd'] }));
      expect(refused).toMatchObject({ code: 'validation_failed' });
      expect(refused.issues).toEqual([
        {
          path: 'event_types.0',
          message: expect.stringContaining('did you mean mandate_activated?'),
        },
      ]);
      const res = await patch(id, {
        event_types: ['mandate_activatd'],
        allow_custom_event_types: true,
      });
      expect(res.status).toBe(200);
      expect((await dataOf(res)).event_types).toEqual(['mandate_activatd']);
    });

    it('should not count the flag alone as a change', async () => {
      const { id } = await createSubscription();
      const body = await errorBody(await patch(id, { allow_custom_event_types: true }));
      expect(body.issues).toEqual([
        { path: '', message: expect.stringMatching(/^Expected at least one of url, /) },
      ]);
    });
  });
});
