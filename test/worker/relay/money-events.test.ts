/**
 * Every money event the sandbox emits, end to end: the sandbox (its own instance, whose
 * clock these tests advance) creates and settles the record and emits the webhook; the
 * real Worker ingests that exact envelope, confirms it against the real verify endpoint
 * through the SDK, stores it `confirmed` and fans it out; the Worker's queue handler
 * delivers it and the recording subscriber receives it. A forged event for an unknown
 * reference of each kind waits `awaiting_confirmation` (the record may only be late), one
 * with another amount is `unconfirmed` at once; neither is delivered.
 */
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { MONEY_EVENTS, PaymentsClient } from '../../../lib/index.ts';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { fetchGateway, sandboxRequests, uniqueRequestId } from '../helpers.ts';
import { webhookRequest } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  recordingQueue,
  runQueue,
} from './delivery-helpers.ts';

afterEach(disableTestSubscriptions);

const SANDBOX = () => inject('confirmSandboxUrl');
const ON = (): Partial<Env> => ({ CONFIRM_MONEY_EVENTS: 'true', UPSTREAM_BASE_URL: SANDBOX() });
const DEST = { destination_bank_code: '058', destination_bank_name: 'GTBank' };

interface Envelope {
  event_type: string;
  event_id: string;
  data: Record<string, unknown>;
}

/** The sandbox's emitted envelopes, newest last. */
async function emitted(): Promise<Envelope[]> {
  const res = await fetch(`${SANDBOX()}/__sandbox/webhooks`);
  const json = (await res.json()) as { data: Array<{ body: Envelope }> };
  return json.data.map((record) => record.body);
}

async function control(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${SANDBOX()}/__sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

const client = () =>
  new PaymentsClient({ keyId: 'sandbox-key', secret: 'sandbox-secret', baseUrl: SANDBOX() });

/** The reference each kind's record is created under, by event type. */
const references = new Map<string, string>();

async function paidPayment(tag: string): Promise<string> {
  const reference = `me_${tag}_${crypto.randomUUID()}`;
  await client().payments.initialize({
    email: 'buyer@example.com',
    amount: '2500.00',
    currency: 'NGN',
    reference,
  });
  await control(`payments/${reference}/complete`, { outcome: 'success' });
  return reference;
}

async function transfer(account: string): Promise<string> {
  const reference = `me_tr_${crypto.randomUUID()}`;
  await client().transfers.initialize({
    reference,
    amount: 150,
    currency: 'NGN',
    customer_name: 'Grace Hopper',
    customer_email: 'grace@example.com',
    destination_bank_account: account,
    ...DEST,
  });
  return reference;
}

async function refund(account?: string): Promise<string> {
  const payment = await paidPayment('refund');
  const reference = `me_rf_${crypto.randomUUID()}`;
  await client().refunds.initialize({
    payment_reference: payment,
    refund_reference: reference,
    currency: 'NGN',
    amount: 100,
    ...(account === undefined ? {} : { account_number: account, bank_code: '058' }),
  });
  return reference;
}

async function activeMandate(): Promise<string> {
  const state = (await (await fetch(`${SANDBOX()}/__sandbox/state`)).json()) as { now: string };
  const day = (offset: number) =>
    new Date(Date.parse(state.now) + offset * 86_400_000).toISOString().slice(0, 10);
  const mandate = await client().directDebits.createMandate({
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    account_number: '0123456789',
    bank_code: '058',
    start_date: day(1),
    end_date: day(60),
    monthly_amount: 10_000,
    monthly_debit_count: 10,
  });
  const reference = mandate.mandate_reference;
  await client().directDebits.initiateActivation(reference);
  await client().directDebits.validateActivation(reference, {
    param1: 'otp',
    value1: '123456',
    param2: 'pin',
    value2: '1234',
  });
  return reference;
}

beforeAll(async () => {
  references.set('charge_success', await paidPayment('charge'));
  references.set('disbursement_success', await transfer('0123456789'));
  references.set('disbursement_failed', await transfer('0000000000'));
  references.set('disbursement_expired', await transfer('0000000001'));
  references.set('disbursement_reversed', await transfer('0000000002'));
  references.set('refund_success', await refund());
  references.set('refund_failed', await refund('0000000000'));
  const mandate = await activeMandate();
  // Debits start on the mandate's start_date: move the sandbox there.
  await control('clock/advance', { seconds: 86_400 + 60 });
  for (const [kind, amount] of [
    ['direct_debit_success', 25],
    ['direct_debit_failure', 25.13],
  ] as const) {
    const reference = `me_dd_${crypto.randomUUID()}`;
    await client().directDebits.debit({
      mandate_reference: mandate,
      debit_amount: amount,
      narration: 'Subscription',
      customer_email: 'ada@example.com',
      payment_reference: reference,
    });
    references.set(kind, reference);
  }
  const account = `me_va_${crypto.randomUUID()}`;
  await client().virtualAccounts.create({
    account_reference: account,
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    currency_code: 'NGN',
    bvn: '12345678901',
  });
  await control(`virtual-accounts/${account}/credit`, { amount: 75 });
  references.set('virtual_account_credit', account);
  // Settles every processing transfer, refund and debit, and the reversal after it.
  await control('clock/advance', { seconds: 3600 });
});

/** The envelope the sandbox emitted for `kind`'s record. */
async function emittedFor(kind: string): Promise<Envelope> {
  const reference = references.get(kind);
  const found = (await emitted()).find(
    (event) =>
      event.event_type === kind && Object.values(event.data).some((value) => value === reference),
  );
  if (found === undefined) throw new Error(`the sandbox emitted no ${kind} for ${reference}`);
  return found;
}

/** Ingests `body` (signed as the sandbox signs) with confirmation on; returns the queue used. */
async function ingest(body: string, requestId: string) {
  const queue = recordingQueue();
  const request = await webhookRequest(body, { headers: { 'X-Request-Id': requestId } });
  const res = await fetchGateway(request, { ...ON(), DELIVERIES: queue.queue });
  expect(res.status, await res.clone().text()).toBe(200);
  return queue;
}

const KINDS = Object.keys(MONEY_EVENTS);

describe('money events', () => {
  it('should cover every money event type the sandbox emits', () => {
    expect(KINDS.sort()).toEqual([...references.keys()].sort());
  });

  describe.each(KINDS)('%s', (kind) => {
    it('should be confirmed against the sandbox and delivered to the subscriber', async () => {
      const { subscription, key } = await createReceiverSubscription({ eventTypes: [kind] });
      const event = await emittedFor(kind);
      const requestId = uniqueRequestId();
      const queue = await ingest(JSON.stringify(event), requestId);
      expect((await findWebhookEvent(env.DB, event.event_id))?.status).toBe('confirmed');
      // The lookup went to the sandbox under the ingress's request id.
      expect((await sandboxRequests(requestId, SANDBOX())).length).toBeGreaterThanOrEqual(1);
      const deliveries = (await listEventDeliveries(env.DB, event.event_id)).filter(
        (delivery) => delivery.subscriptionId === subscription.id,
      );
      expect(deliveries).toHaveLength(1);
      const sent = queue.batches.flat().map((message) => ({ body: message.body }));
      expect(sent).toContainEqual({
        body: { deliveryId: deliveries[0]?.id, subscriptionId: subscription.id },
      });
      await runQueue('edgepay-deliveries', sent);
      const received = await receivedUnder(key);
      expect(received.map((delivery) => JSON.parse(delivery.body).event_id)).toEqual([
        event.event_id,
      ]);
    });

    it('should await confirmation, undelivered, when forged for an unknown record', async () => {
      await createReceiverSubscription({ eventTypes: [kind] });
      const real = await emittedFor(kind);
      const forged = {
        ...real,
        event_id: `evt_forged_${crypto.randomUUID()}`,
        data: Object.fromEntries(
          Object.entries(real.data).map(([field, value]) => [
            field,
            value === references.get(kind) ? `unknown_${crypto.randomUUID()}` : value,
          ]),
        ),
      };
      if (kind === 'virtual_account_credit') forged.data.transaction_id = 'vat_forged';
      const queue = await ingest(JSON.stringify(forged), uniqueRequestId());
      const stored = await findWebhookEvent(env.DB, forged.event_id);
      expect(stored?.status).toBe('awaiting_confirmation');
      expect(stored?.confirmation?.reason).toBe('record not found');
      expect(await listEventDeliveries(env.DB, forged.event_id)).toEqual([]);
      expect(queue.batches.flat()).toEqual([
        { body: { kind: 'confirm', eventId: forged.event_id, check: 1 }, delaySeconds: 10 },
      ]);
    });

    it('should be unconfirmed at once, undelivered, when forged with another amount', async () => {
      await createReceiverSubscription({ eventTypes: [kind] });
      const real = await emittedFor(kind);
      const field = MONEY_EVENTS[kind]?.amount ?? 'amount';
      const forged = {
        ...real,
        event_id: `evt_forged_${crypto.randomUUID()}`,
        data: { ...real.data, [field]: 999_999.99 },
      };
      const queue = await ingest(JSON.stringify(forged), uniqueRequestId());
      const stored = await findWebhookEvent(env.DB, forged.event_id);
      expect(stored?.status).toBe('unconfirmed');
      expect(stored?.confirmation?.reason).toMatch(/^amount 999999\.99 differs from the record's /);
      expect(await listEventDeliveries(env.DB, forged.event_id)).toEqual([]);
      expect(queue.batches).toEqual([]);
    });
  });
});
