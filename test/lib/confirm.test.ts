/**
 * `confirmWebhookEvent` under Node against the in-process sandbox (the real emulator, its
 * clock held by the test): what is confirmed, what is only not yet confirmed (no record,
 * a state that is not final, a service that cannot answer) and what is contradicted, each
 * with its reason; inbound transfers found past the first page of 100.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { INBOUND_TRANSFER_WINDOW_MS } from '../../lib/confirm-rules.ts';
import {
  AbortError,
  type ConfirmableEvent,
  ConnectionError,
  confirmWebhookEvent,
  PaymentsClient,
} from '../../lib/index.ts';
import { createSandbox, type Sandbox } from '../../lib/testing/index.ts';

const T0 = Date.now();
const DEST = { destination_bank_code: '058', destination_bank_name: 'GTBank' };

let now = T0;
let sandbox: Sandbox;
let client: PaymentsClient;

beforeEach(() => {
  now = T0;
  sandbox = createSandbox({ now: () => now });
  client = new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: 'http://sandbox.test',
    maxRetries: 0,
    now: () => now,
    fetch: (input, init) => sandbox.fetch(new Request(input, init)),
  });
});

async function control(path: string, body: unknown): Promise<void> {
  const response = await sandbox.fetch(
    new Request(`http://sandbox.test/__sandbox/${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
  expect(response.status, await response.clone().text()).toBe(200);
}

/** A payment of 5000.00 NGN, completed with `outcome` unless `null` (left processing). */
async function payment(outcome: 'success' | 'failed' | null = 'success'): Promise<string> {
  const reference = `pay_${crypto.randomUUID()}`;
  await client.payments.initialize({
    email: 'buyer@example.com',
    amount: '5000.00',
    currency: 'NGN',
    reference,
  });
  if (outcome !== null) await control(`payments/${reference}/complete`, { outcome });
  return reference;
}

async function transfer(account: string): Promise<string> {
  const reference = `tr_${crypto.randomUUID()}`;
  await client.transfers.initialize({
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

const charge = (data: Record<string, unknown>): ConfirmableEvent => ({
  event_type: 'charge_success',
  data: { amount: 5000, currency: 'NGN', ...data },
});

describe('confirmWebhookEvent', () => {
  describe('confirmed', () => {
    it('should confirm a charge_success whose payment succeeded with the same amount', async () => {
      const reference = await payment();
      const confirmation = await confirmWebhookEvent(client, charge({ reference }));
      expect(confirmation).toMatchObject({ outcome: 'confirmed', reason: 'status success' });
      expect(confirmation.outcome === 'confirmed' && confirmation.record.reference).toBe(reference);
    });

    it('should confirm a disbursement_success checked after its transfer was reversed', async () => {
      const reference = await transfer('0000000002');
      // Settled (success) at 5 s, reversed 5 s later: the check comes after both.
      now += 20_000;
      await control('clock/advance', { seconds: 0 });
      const event = { event_type: 'disbursement_success', data: { reference, amount: 150 } };
      expect(await confirmWebhookEvent(client, event)).toMatchObject({
        outcome: 'confirmed',
        reason: 'status reversed',
      });
    });

    it('should answer unchecked for an event that moves no money', async () => {
      const event = { event_type: 'mandate_activated', data: { mandate_reference: 'm' } };
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'unchecked',
        reason: 'not a money event',
      });
    });
  });

  describe('not_yet', () => {
    it('should answer not_yet when the service has no such record yet', async () => {
      const event = charge({ reference: `pay_${crypto.randomUUID()}` });
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'not_yet',
        reason: 'record not found',
      });
    });

    it('should answer not_yet while the payment is still processing', async () => {
      const reference = await payment(null);
      expect(await confirmWebhookEvent(client, charge({ reference }))).toEqual({
        outcome: 'not_yet',
        reason: 'status processing',
      });
    });

    it('should answer not_yet for a disbursement_failed while verify still says processing', async () => {
      const reference = await transfer('0000000000');
      const event = { event_type: 'disbursement_failed', data: { reference, amount: 150 } };
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'not_yet',
        reason: 'status processing',
      });
      now += 10_000;
      await control('clock/advance', { seconds: 0 });
      expect(await confirmWebhookEvent(client, event)).toMatchObject({ outcome: 'confirmed' });
    });

    it('should answer not_yet with the error as cause when the service cannot be reached', async () => {
      const offline = new PaymentsClient({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        baseUrl: 'http://127.0.0.1:1',
        maxRetries: 0,
      });
      const confirmation = await confirmWebhookEvent(offline, charge({ reference: 'pay_1' }));
      expect(confirmation.outcome).toBe('not_yet');
      expect(confirmation.reason).toMatch(/^the service could not answer: /);
      expect(confirmation.outcome === 'not_yet' && confirmation.cause).toBeInstanceOf(
        ConnectionError,
      );
    });

    it('should throw AbortError when the caller aborts', async () => {
      const event = charge({ reference: await payment() });
      const promise = confirmWebhookEvent(client, event, { signal: AbortSignal.abort() });
      await expect(promise).rejects.toBeInstanceOf(AbortError);
    });
  });

  describe('contradicted', () => {
    it('should name both amounts when they differ', async () => {
      const reference = await payment();
      expect(await confirmWebhookEvent(client, charge({ reference, amount: '5000.01' }))).toEqual({
        outcome: 'contradicted',
        reason: "amount 5000.01 differs from the record's 5000.00",
      });
    });

    it('should name both currencies when they differ', async () => {
      const reference = await payment();
      expect(await confirmWebhookEvent(client, charge({ reference, currency: 'USD' }))).toEqual({
        outcome: 'contradicted',
        reason: "currency USD differs from the record's NGN",
      });
    });

    it('should contradict another amount even while the record is not final', async () => {
      const reference = await payment(null);
      const confirmation = await confirmWebhookEvent(client, charge({ reference, amount: 1 }));
      expect(confirmation.outcome).toBe('contradicted');
    });

    it('should contradict a charge_success whose payment failed (a final state)', async () => {
      const reference = await payment('failed');
      expect(await confirmWebhookEvent(client, charge({ reference }))).toEqual({
        outcome: 'contradicted',
        reason: 'status failed, expected success',
      });
    });

    it('should contradict a disbursement_success whose transfer failed', async () => {
      const reference = await transfer('0000000000');
      now += 10_000;
      await control('clock/advance', { seconds: 0 });
      const event = { event_type: 'disbursement_success', data: { reference, amount: 150 } };
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'contradicted',
        reason: 'status failed, expected success',
      });
    });

    it.each([
      ['no reference', {}, 'no reference in the event'],
      ['a dot segment', { reference: '..' }, 'the service cannot look reference up'],
    ])('should contradict an event naming %s', async (_name, data, reason) => {
      expect(await confirmWebhookEvent(client, charge(data))).toEqual({
        outcome: 'contradicted',
        reason,
      });
    });
  });

  describe('virtual_account_credit', () => {
    /** A virtual account credited `count` times; returns the first credit's event data. */
    async function credited(count: number, stepMs: number): Promise<Record<string, unknown>> {
      const account = `va_${crypto.randomUUID()}`;
      await client.virtualAccounts.create({
        account_reference: account,
        customer_name: 'Ada Lovelace',
        customer_email: 'ada@example.com',
        currency_code: 'NGN',
        bvn: '12345678901',
      });
      for (let index = 0; index < count; index++) {
        await control(`virtual-accounts/${account}/credit`, { amount: 75 });
        now += stepMs;
      }
      const response = await sandbox.fetch(new Request('http://sandbox.test/__sandbox/webhooks'));
      const { data: hooks } = (await response.json()) as {
        data: Array<{ body: { event_type: string; data: Record<string, unknown> } }>;
      };
      const first = hooks.find(
        (hook) =>
          hook.body.event_type === 'virtual_account_credit' &&
          hook.body.data.account_reference === account,
      );
      if (first === undefined) throw new Error('no virtual_account_credit emitted');
      return first.body.data;
    }

    it('should confirm a transfer that is on page 2 of transactions at the same instant', async () => {
      const data = await credited(101, 0);
      expect(
        await confirmWebhookEvent(client, { event_type: 'virtual_account_credit', data }),
      ).toMatchObject({ outcome: 'confirmed' });
    });

    it('should confirm a transfer on page 3 of the window around its created_at', async () => {
      const data = await credited(250, INBOUND_TRANSFER_WINDOW_MS / 500);
      expect(
        await confirmWebhookEvent(client, { event_type: 'virtual_account_credit', data }),
      ).toMatchObject({ outcome: 'confirmed' });
    });

    it('should confirm an event whose created_at is written to the whole second', async () => {
      const data = await credited(1, 0);
      const atSecond = `${String(data.created_at).slice(0, 19)}Z`;
      const event = {
        event_type: 'virtual_account_credit',
        data: { ...data, created_at: atSecond },
      };
      expect(await confirmWebhookEvent(client, event)).toMatchObject({ outcome: 'confirmed' });
    });

    it('should answer not_yet for a transaction id the account does not have', async () => {
      const data = await credited(1, 0);
      const event = {
        event_type: 'virtual_account_credit',
        data: { ...data, transaction_id: 'vat_x' },
      };
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'not_yet',
        reason: 'record not found',
      });
    });

    it('should contradict an event whose created_at is not a date-time', async () => {
      const data = await credited(1, 0);
      const event = { event_type: 'virtual_account_credit', data: { ...data, created_at: 'soon' } };
      expect(await confirmWebhookEvent(client, event)).toEqual({
        outcome: 'contradicted',
        reason: 'created_at is not a date-time',
      });
    });
  });
});
