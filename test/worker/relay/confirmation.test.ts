/**
 * Confirmation of money events at the webhook ingress, through the
 * real Worker, the real D1 of miniflare and the real sandbox upstream
 * (`inject('sandboxUrl')` = `UPSTREAM_BASE_URL`). `CONFIRM_MONEY_EVENTS` is passed
 * explicitly per request, so these tests hold whatever the test bindings default to.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../../lib/signing.ts';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import {
  fetchGateway,
  recordingDb,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import { createReceiverSubscription, disableTestSubscriptions } from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const ON = { CONFIRM_MONEY_EVENTS: 'true' } as const;

/** Initializes a payment of 5000.00 NGN at the sandbox, signed; returns its reference. */
async function createPayment(): Promise<string> {
  const reference = `conf_${crypto.randomUUID()}`;
  const body = JSON.stringify({
    email: 'buyer@example.com',
    amount: 5000,
    currency: 'NGN',
    reference,
  });
  const signature = await signRequest({ keyId: 'sandbox-key', secret: 'sandbox-secret', body });
  const res = await fetch(`${inject('sandboxUrl')}/payments/initialize`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...signature },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return reference;
}

/** Completes a checkout at the sandbox (unsigned control). */
async function completePayment(reference: string, outcome = 'success'): Promise<void> {
  const res = await fetch(
    `${inject('sandboxUrl')}/__sandbox/payments/${encodeURIComponent(reference)}/complete`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ outcome }),
    },
  );
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Ingests a signed `charge_success` for `reference`; returns the event id. */
async function ingestCharge(
  reference: string,
  overrides: Partial<Env>,
  amount: number | string = 5000,
  requestId = uniqueRequestId(),
): Promise<string> {
  const event = envelope({
    event_type: 'charge_success',
    data: { reference, amount, currency: 'NGN', metadata: null },
  });
  const request = await webhookRequest(JSON.stringify(event), {
    headers: { 'X-Request-Id': requestId },
  });
  const res = await fetchGateway(request, overrides);
  expect(res.status, await res.clone().text()).toBe(200);
  return String(event.event_id);
}

async function deliveriesOf(eventId: string): Promise<number> {
  return (await listEventDeliveries(env.DB, eventId)).length;
}

describe('confirmation', () => {
  describe('POST /webhooks', () => {
    it('should store a charge_success confirmed by the sandbox as confirmed and fan it out', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const reference = await createPayment();
      await completePayment(reference);
      const requestId = uniqueRequestId();
      const eventId = await ingestCharge(reference, ON, '5000.00', requestId);
      expect((await findWebhookEvent(env.DB, eventId))?.status).toBe('confirmed');
      expect(await deliveriesOf(eventId)).toBeGreaterThanOrEqual(1);
      const lookups = await sandboxRequests(requestId);
      expect(lookups.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
        `GET /payments/verify/${reference}`,
      ]);
    });

    it('should answer copies of a confirmed event as duplicates without looking it up again', async () => {
      const reference = await createPayment();
      await completePayment(reference);
      const event = envelope({
        event_type: 'charge_success',
        data: { reference, amount: 5000, currency: 'NGN', metadata: null },
      });
      const body = JSON.stringify(event);
      const requestIds = [uniqueRequestId(), uniqueRequestId(), uniqueRequestId()];
      for (const [index, requestId] of requestIds.entries()) {
        const request = await webhookRequest(body, { headers: { 'X-Request-Id': requestId } });
        const res = await fetchGateway(request, ON);
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ duplicate: index > 0 });
      }
      // One lookup for the first; the copies (a replay inside the signature's tolerance, or a
      // provider's retry) are answered from D1 alone.
      const lookups = await Promise.all(requestIds.map((id) => sandboxRequests(id)));
      expect(lookups.map((entries) => entries.length)).toEqual([1, 0, 0]);
      expect((await findWebhookEvent(env.DB, String(event.event_id)))?.status).toBe('confirmed');
    });

    it('should store a charge_success for an unknown payment as awaiting confirmation, undelivered, checked again 10 s later', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const eventId = await ingestCharge(`conf_unknown_${crypto.randomUUID()}`, ON);
      const stored = await findWebhookEvent(env.DB, eventId);
      expect(stored?.status).toBe('awaiting_confirmation');
      expect(stored?.confirmation).toMatchObject({ reason: 'record not found', checks: 1 });
      expect(stored?.confirmation?.nextCheckAt).toBe((stored?.receivedAt ?? 0) + 10_000);
      expect(await deliveriesOf(eventId)).toBe(0);
    });

    it('should store a charge_success whose reference is a dot segment as unconfirmed at once (200, not 503)', async () => {
      const eventId = await ingestCharge('..', ON);
      const stored = await findWebhookEvent(env.DB, eventId);
      expect(stored?.status).toBe('unconfirmed');
      expect(stored?.confirmation?.reason).toBe('the service cannot look reference up');
      expect(await deliveriesOf(eventId)).toBe(0);
    });

    it('should keep waiting for a reference the service answers 404 to, however odd', async () => {
      const eventId = await ingestCharge(`conf ${'x'.repeat(200)}`, ON);
      expect((await findWebhookEvent(env.DB, eventId))?.status).toBe('awaiting_confirmation');
      expect(await deliveriesOf(eventId)).toBe(0);
    });

    it('should store a charge_success for a still-processing payment as awaiting confirmation', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const reference = await createPayment();
      const eventId = await ingestCharge(reference, ON);
      const stored = await findWebhookEvent(env.DB, eventId);
      expect(stored?.status).toBe('awaiting_confirmation');
      expect(stored?.confirmation?.reason).toBe('status processing');
      expect(await deliveriesOf(eventId)).toBe(0);
    });

    it('should store a charge_success whose amount disagrees as unconfirmed, with the reason', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const reference = await createPayment();
      await completePayment(reference);
      const eventId = await ingestCharge(reference, ON, 5000.01);
      const stored = await findWebhookEvent(env.DB, eventId);
      expect(stored?.status).toBe('unconfirmed');
      expect(stored?.confirmation).toMatchObject({
        reason: "amount 5000.01 differs from the record's 5000.00",
        nextCheckAt: null,
      });
      expect(await deliveriesOf(eventId)).toBe(0);
    });

    it('should store a direct_debit_success for an unknown debit as awaiting confirmation', async () => {
      const event = envelope({
        event_type: 'direct_debit_success',
        data: { payment_reference: `dd_${crypto.randomUUID()}`, debit_amount: 10 },
      });
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), ON);
      expect(res.status).toBe(200);
      expect((await findWebhookEvent(env.DB, String(event.event_id)))?.status).toBe(
        'awaiting_confirmation',
      );
    });

    it('should fan out a charge_success without any lookup when CONFIRM_MONEY_EVENTS is false', async () => {
      await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const requestId = uniqueRequestId();
      const eventId = await ingestCharge(
        `conf_unknown_${crypto.randomUUID()}`,
        { CONFIRM_MONEY_EVENTS: 'false' },
        5000,
        requestId,
      );
      expect((await findWebhookEvent(env.DB, eventId))?.status).toBe('received');
      expect(await deliveriesOf(eventId)).toBeGreaterThanOrEqual(1);
      expect(await sandboxRequests(requestId)).toEqual([]);
    });

    it('should store a non-money event as received without any lookup', async () => {
      const requestId = uniqueRequestId();
      const event = envelope({ event_type: 'mandate_activated', data: { reference: 'x' } });
      const request = await webhookRequest(JSON.stringify(event), {
        headers: { 'X-Request-Id': requestId },
      });
      const res = await fetchGateway(request, ON);
      expect(res.status).toBe(200);
      expect((await findWebhookEvent(env.DB, String(event.event_id)))?.status).toBe('received');
      expect(await sandboxRequests(requestId)).toEqual([]);
    });

    it('should store a charge_success whose reference holds a lone surrogate as unconfirmed (200, not 500)', async () => {
      // No path can carry it: the SDK cannot look it up, as for a dot segment.
      const event = envelope({
        event_type: 'charge_success',
        data: { reference: `conf_\udb80${crypto.randomUUID()}`, amount: 5000, currency: 'NGN' },
      });
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), ON);
      expect(res.status).toBe(200);
      expect((await findWebhookEvent(env.DB, String(event.event_id)))?.status).toBe('unconfirmed');
    });

    it('should store a non-money event in one batch with nothing read before it', async () => {
      const event = envelope({ event_type: 'mandate_activated', data: { reference: 'x' } });
      const { db, statements } = recordingDb();
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), {
        ...ON,
        DB: db,
      });
      expect(res.status).toBe(200);
      // The event's insert and its fan-out, no read of the event by id before them: only a
      // money event can cost an upstream lookup that a copy must not repeat.
      expect(statements).toHaveLength(2);
      expect(statements[0]).toMatch(/^\s*INSERT INTO webhook_events/);
      const copy = await fetchGateway(await webhookRequest(JSON.stringify(event)), ON);
      expect(await copy.json()).toMatchObject({ duplicate: true });
    });

    it('should store the event as awaiting confirmation (200) when the upstream is unreachable', async () => {
      const event = envelope({ data: { reference: 'pay_x', amount: 1 } });
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), {
        ...ON,
        UPSTREAM_BASE_URL: 'http://127.0.0.1:1',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        status: 'success',
        event_id: event.event_id,
        duplicate: false,
      });
      const stored = await findWebhookEvent(env.DB, String(event.event_id));
      expect(stored?.status).toBe('awaiting_confirmation');
      expect(stored?.confirmation?.reason).toMatch(/^the service could not answer: /);
      expect(await deliveriesOf(String(event.event_id))).toBe(0);
    });
  });
});
