/**
 * The event-type catalog against the sandbox: every type the emulator sends, walked through
 * each of its flows in-process (payments, transfers to the magic accounts, refunds, mandates
 * and debits, virtual-account credits), is in the catalog, and each sent body fits the
 * published data schema of its type.
 */

import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { PaymentsClient } from '../../../lib/index.ts';
import { createSandbox } from '../../../lib/testing/index.ts';
import { EVENT_TYPE_CATALOG, KNOWN_EVENT_TYPES } from '../../../worker/relay/event-catalog.ts';

/** An in-process sandbox whose clock the test moves, and a client of it. */
function sandboxWithClient() {
  let now = Date.UTC(2026, 0, 5, 9);
  const sandbox = createSandbox({ now: () => now });
  const client = new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: 'http://sandbox.test',
    maxRetries: 0,
    now: () => now,
    fetch: (input, init) => sandbox.fetch(new Request(input, init)),
  });
  async function control(path: string, body: unknown): Promise<unknown> {
    const res = await sandbox.fetch(
      new Request(`http://sandbox.test/__sandbox/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { data: unknown }).data;
  }
  async function advance(seconds: number): Promise<void> {
    now += seconds * 1000;
    await control('clock/advance', { seconds });
  }
  return { client, control, advance };
}

describe('event-type catalog', () => {
  it('should list every type the sandbox sends, each body fitting its data schema', async () => {
    const { client, control, advance } = sandboxWithClient();
    const paid = `cat_pay_${crypto.randomUUID()}`;
    await client.payments.initialize({
      email: 'b@example.com',
      amount: '5000.00',
      currency: 'NGN',
      reference: paid,
    });
    await control(`payments/${paid}/complete`, { outcome: 'success' });
    // Transfers: a normal one, and the accounts that fail, expire, and succeed then reverse.
    for (const account of ['0123456789', '0000000000', '0000000001', '0000000002']) {
      await client.transfers.initialize({
        reference: `cat_tr_${crypto.randomUUID()}`,
        amount: '10.00',
        currency: 'NGN',
        customer_name: 'Grace Hopper',
        customer_email: 'grace@example.com',
        destination_bank_code: '058',
        destination_bank_account: account,
        destination_bank_name: 'GTBank',
      });
    }
    // Refunds: one paid back, one to the account that fails.
    for (const account of [undefined, '0000000000']) {
      await client.refunds.initialize({
        payment_reference: paid,
        refund_reference: `cat_rf_${crypto.randomUUID()}`,
        currency: 'NGN',
        amount: '1.00',
        ...(account === undefined ? {} : { account_number: account, bank_code: '058' }),
      });
    }
    const mandate = await client.directDebits.createMandate({
      customer_name: 'Ada Lovelace',
      customer_email: 'ada@example.com',
      account_number: '0123456789',
      bank_code: '058',
      start_date: '2026-01-06',
      end_date: '2026-03-31',
      monthly_amount: 50000,
      monthly_debit_count: 4,
    });
    const challenge = await client.directDebits.initiateActivation(mandate.mandate_reference);
    await client.directDebits.validateActivation(mandate.mandate_reference, {
      param1: challenge.param1,
      value1: '123456',
      param2: challenge.param2,
      value2: '1234',
    });
    await advance(86_400);
    // A debit, and one of an amount ending in .13, which the bank rejects.
    for (const amount of [1000, 1000.13]) {
      await client.directDebits.debit({
        mandate_reference: mandate.mandate_reference,
        debit_amount: amount,
        narration: 'Subscription',
        customer_email: 'ada@example.com',
        payment_reference: `cat_dd_${crypto.randomUUID()}`,
      });
    }
    const account = `cat_va_${crypto.randomUUID()}`;
    await client.virtualAccounts.create({
      account_reference: account,
      customer_name: 'Ada Lovelace',
      customer_email: `${account}@example.com`,
      currency_code: 'NGN',
      bvn: '12345678901',
    });
    await control(`virtual-accounts/${account}/credit`, { amount: '1500.25' });
    // Everything processing settles, then the reversal comes.
    await advance(30);
    await advance(30);

    const sent = (await control('webhooks', undefined)) as { body: Record<string, unknown> }[];
    const types = new Set(sent.map((record) => String(record.body.event_type)));
    expect([...types].sort()).toEqual(
      EVENT_TYPE_CATALOG.filter((entry) => entry.origin !== 'relay')
        .map((entry) => entry.type)
        .sort(),
    );
    for (const type of types) expect(KNOWN_EVENT_TYPES.has(type)).toBe(true);
    for (const { body } of sent) {
      const entry = EVENT_TYPE_CATALOG.find((e) => e.type === body.event_type);
      expect(v.safeParse(entry?.data ?? v.never(), body.data).issues, String(body.event_type)).toBe(
        undefined,
      );
    }
  });
});
