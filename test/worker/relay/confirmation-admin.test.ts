/**
 * A money event awaiting confirmation as the admin API shows it: found by its status,
 * its confirmation (reason, checks, next check) on the detail route, and its replay held
 * behind `force` like an unconfirmed event's. Real Worker, D1 and confirm sandbox.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorBody, fetchGateway } from '../helpers.ts';
import { adminRequest, dataOf, type EventSummary } from '../routes/admin/admin-helpers.ts';
import { ingest, storedEvent } from './confirmation-helpers.ts';
import { createReceiverSubscription, disableTestSubscriptions } from './delivery-helpers.ts';

afterEach(disableTestSubscriptions);

/** Ingests a charge_success for a payment the sandbox does not have: it awaits confirmation. */
async function awaitingEvent(): Promise<string> {
  const eventId = `evt_ca_${crypto.randomUUID()}`;
  const { res } = await ingest(
    JSON.stringify({
      event_type: 'charge_success',
      event_id: eventId,
      timestamp: new Date().toISOString(),
      data: { reference: `ca_${crypto.randomUUID()}`, amount: 10, currency: 'NGN' },
    }),
  );
  expect(res.status).toBe(200);
  return eventId;
}

describe('admin API: events awaiting confirmation', () => {
  it('should list an awaiting event under status=awaiting_confirmation', async () => {
    const eventId = await awaitingEvent();
    const res = await fetchGateway(
      adminRequest('GET', '/admin/events?status=awaiting_confirmation&page_size=100'),
    );
    expect(res.status).toBe(200);
    const listed = await dataOf<EventSummary[]>(res);
    expect(listed.find((event) => event.event_id === eventId)).toMatchObject({
      status: 'awaiting_confirmation',
    });
    expect(listed.every((event) => event.status === 'awaiting_confirmation')).toBe(true);
  });

  it('should show the reason, the checks and the next check of one event', async () => {
    const eventId = await awaitingEvent();
    const stored = await storedEvent(eventId);
    const res = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
    expect(res.status).toBe(200);
    expect(await dataOf(res)).toMatchObject({
      status: 'awaiting_confirmation',
      confirmation: {
        reason: 'record not found',
        checks: 1,
        checked_at: new Date(stored.receivedAt).toISOString(),
        next_check_at: new Date(stored.receivedAt + 10_000).toISOString(),
      },
    });
  });

  it('should refuse to replay it without force (409 event_unconfirmed), and replay it forced', async () => {
    await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const eventId = await awaitingEvent();
    const refused = await fetchGateway(adminRequest('POST', `/admin/events/${eventId}/replay`));
    expect(refused.status).toBe(409);
    const error = await errorBody(refused);
    expect(error.code).toBe('event_unconfirmed');
    expect(error.message).toContain('is not yet confirmed by the payment service');
    const forced = await fetchGateway(
      adminRequest('POST', `/admin/events/${eventId}/replay`, {
        json: { force: true, operator: 'ada@ops' },
      }),
    );
    expect(forced.status).toBe(202);
    expect((await dataOf<{ delivery_ids: string[] }>(forced)).delivery_ids).toHaveLength(1);
  });
});
