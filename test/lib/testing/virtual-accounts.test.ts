/**
 * Contract tests of the sandbox emulator's virtual accounts over real HTTP (docs/payments-api.md,
 * "Endpoints > Virtual accounts", "Events"; the control `/__sandbox/virtual-accounts/{ref}/credit`).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { creationRequests, listRequest } from '../../support/endpoints.ts';
import {
  expectError,
  expectIsoTimestamp,
  expectSignedWebhook,
  expectSuccess,
  expectTimestamps,
  expectTwoPages,
  expectValidation,
} from '../../support/expect-api.ts';
import { itRejectsBadListQuery } from '../../support/list-suites.ts';
import { virtualAccountBody } from '../../support/payloads.ts';
import { type ApiResponse, type Json, toMinor, uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient, useWebhookReceiver } from '../../support/sandbox-fixture.ts';
import { webhookWith } from '../../support/webhook-receiver.ts';

const hooks = useWebhookReceiver();
const api = useSandboxClient(() => ({ webhookUrl: hooks.url }));

const createAccount = creationRequests(api, '/virtual-accounts', virtualAccountBody).send;

async function credit(
  accountReference: string,
  body: Record<string, unknown>,
): Promise<ApiResponse> {
  return api.control(`virtual-accounts/${encodeURIComponent(accountReference)}/credit`, body);
}

describe('sandbox virtual accounts', () => {
  describe('POST /virtual-accounts', () => {
    it('should answer the flat creation shape with an active account', async () => {
      const body = virtualAccountBody();
      const res = await api.call('POST', '/virtual-accounts', body);
      expectSuccess(res);
      expect(res.body).toMatchObject({
        account_reference: body.account_reference,
        account_status: 'active',
        customer_name: body.customer_name,
        customer_email: body.customer_email,
      });
      expect(res.body.account_number).toMatch(/^\d{10}$/);
      for (const key of ['bank_name', 'bank_code', 'reservation_reference']) {
        expect(typeof res.body[key]).toBe('string');
        expect(res.body[key].length).toBeGreaterThan(0);
      }
    });

    it('should not wrap the creation answer or add fields the spec leaves out', async () => {
      const res = await createAccount();
      expect(res.body.data).toBeUndefined();
      expect(res.body.currency_code).toBeUndefined();
      expect(res.body.metadata).toBeUndefined();
      expect(res.body.created_at).toBeUndefined();
    });

    it('should give every account a distinct account number and reservation reference', async () => {
      const a = (await createAccount()).body;
      const b = (await createAccount()).body;
      expect(a.account_number).not.toBe(b.account_number);
      expect(a.reservation_reference).not.toBe(b.reservation_reference);
    });

    it('should reject a reused account_reference with 409 duplicate_reference', async () => {
      const accountReference = uniqueRef('va');
      expectSuccess(await createAccount({ account_reference: accountReference }));
      expectError(
        await createAccount({ account_reference: accountReference }),
        409,
        'duplicate_reference',
      );
    });

    it.each([
      ['a 10-digit bvn', '1234567890'],
      ['a 12-digit bvn', '123456789012'],
      ['a bvn with letters', '1234567890a'],
      ['a numeric bvn', 12345678901],
    ])('should reject %s with an issue at bvn', async (_label, bvn) => {
      expectValidation(await createAccount({ bvn }), ['bvn']);
    });

    it('should require bvn for an NGN account', async () => {
      const body = virtualAccountBody();
      delete body.bvn;
      expectValidation(await api.call('POST', '/virtual-accounts', body), ['bvn']);
    });

    it('should reject a currency_code other than the account currency with an issue at currency_code', async () => {
      expectValidation(await createAccount({ currency_code: 'USD' }), ['currency_code']);
    });

    it('should list every missing required field as an issue', async () => {
      expectValidation(await api.call('POST', '/virtual-accounts', {}), [
        'account_reference',
        'customer_name',
        'customer_email',
        'currency_code',
        'bvn',
      ]);
    });

    it('should reject metadata that is not an object with an issue at metadata', async () => {
      expectValidation(await createAccount({ metadata: [1, 2] }), ['metadata']);
    });
  });

  describe('GET /virtual-accounts/{account_reference}', () => {
    it('should return the full account under data', async () => {
      const body = virtualAccountBody({ metadata: { tier: 2 } });
      const created = (await api.call('POST', '/virtual-accounts', body)).body;
      const res = await api.call('GET', `/virtual-accounts/${body.account_reference}`);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        account_reference: body.account_reference,
        reservation_reference: created.reservation_reference,
        account_number: created.account_number,
        bank_name: created.bank_name,
        bank_code: created.bank_code,
        account_status: 'active',
        customer_name: body.customer_name,
        customer_email: body.customer_email,
        currency_code: 'NGN',
        metadata: { tier: 2 },
      });
      expectIsoTimestamp(res.body.data.created_at);
    });

    it('should answer 404 not_found for an unknown account', async () => {
      expectError(await api.call('GET', `/virtual-accounts/${uniqueRef('va')}`), 404, 'not_found');
    });
  });

  describe('POST /virtual-accounts/email', () => {
    it('should find the account of an email', async () => {
      const body = virtualAccountBody();
      await api.call('POST', '/virtual-accounts', body);
      const res = await api.call('POST', '/virtual-accounts/email', {
        email: body.customer_email,
      });
      expectSuccess(res);
      expect(res.body.data.account_reference).toBe(body.account_reference);
      expect(res.body.data.customer_email).toBe(body.customer_email);
    });

    it('should answer the most recently created account of an email', async () => {
      const email = `${uniqueRef('two')}@example.com`;
      await createAccount({ customer_email: email });
      await api.advance(60);
      const newer = (await createAccount({ customer_email: email })).body.account_reference;
      const res = await api.call('POST', '/virtual-accounts/email', { email });
      expect(res.body.data.account_reference).toBe(newer);
    });

    it('should match the email case-insensitively', async () => {
      const body = virtualAccountBody();
      await api.call('POST', '/virtual-accounts', body);
      const res = await api.call('POST', '/virtual-accounts/email', {
        email: String(body.customer_email).toUpperCase(),
      });
      expectSuccess(res);
      expect(res.body.data.account_reference).toBe(body.account_reference);
    });

    it('should answer 404 not_found for an email without an account', async () => {
      const res = await api.call('POST', '/virtual-accounts/email', {
        email: `${uniqueRef('nobody')}@example.com`,
      });
      expectError(res, 404, 'not_found');
    });

    it('should reject an invalid email with an issue at email', async () => {
      expectValidation(await api.call('POST', '/virtual-accounts/email', { email: 'nope' }), [
        'email',
      ]);
    });
  });

  describe('POST /__sandbox/virtual-accounts/{account_reference}/credit', () => {
    it('should record a successful inbound transaction with the sender details', async () => {
      const account = (await createAccount({ metadata: { tier: 'gold' } })).body;
      const res = await credit(account.account_reference, {
        amount: 1500.25,
        sender_name: 'Chidi Okeke',
        sender_bank: 'Access Bank',
        narration: 'Top up',
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        account_reference: account.account_reference,
        amount: 1500.25,
        status: 'success',
      });
      const list = await api.call(
        'GET',
        `/merchants/virtual-accounts/transactions?account_reference=${account.account_reference}`,
      );
      expect(list.body.total).toBe(1);
      const [txn] = list.body.data as Json[];
      expect(txn).toMatchObject({
        account_reference: account.account_reference,
        account_number: account.account_number,
        amount: 1500.25,
        currency: 'NGN',
        status: 'success',
        sender_name: 'Chidi Okeke',
        sender_bank: 'Access Bank',
        narration: 'Top up',
        metadata: { tier: 'gold' },
      });
      expect(typeof txn.transaction_id).toBe('string');
      expectTimestamps(txn);
    });

    it('should credit the merchant balance with the amount', async () => {
      const account = (await createAccount()).body;
      const before = await api.balanceMinor();
      await credit(account.account_reference, { amount: '2000.10' });
      expect(await api.balanceMinor()).toBe(before + toMinor('2000.10'));
    });

    it('should send a signed webhook naming the account and amount', async () => {
      const account = (await createAccount()).body;
      await credit(account.account_reference, { amount: 75.5 });
      const hook = await hooks.waitFor(
        webhookWith('account_reference', account.account_reference),
        { tick: api.tick },
      );
      expect(hook.body.event_type).toBe('virtual_account_credit');
      expect(hook.body.status).toBe('success');
      expect(hook.body.data.amount).toBe(75.5);
      expect(hook.body.data.account_number).toBe(account.account_number);
      expect(typeof hook.body.event_id).toBe('string');
      await expectSignedWebhook(hook);
    });

    it('should default the sender details when the control omits them', async () => {
      const account = (await createAccount()).body;
      const res = await credit(account.account_reference, { amount: 5 });
      for (const key of ['sender_name', 'sender_bank', 'narration']) {
        expect(typeof res.body.data[key]).toBe('string');
        expect(res.body.data[key].length).toBeGreaterThan(0);
      }
    });

    it('should answer 404 not_found for an unknown account', async () => {
      expectError(await credit(uniqueRef('va'), { amount: 10 }), 404, 'not_found');
    });

    it.each([
      ['zero', 0],
      ['a negative amount', -5],
      ['three decimals', 1.001],
    ])('should reject %s as amount with an issue at amount', async (_label, amount) => {
      const account = (await createAccount()).body;
      const before = await api.balanceMinor();
      expectValidation(await credit(account.account_reference, { amount }), ['amount']);
      expect(await api.balanceMinor()).toBe(before);
    });
  });

  describe('GET /merchants/virtual-accounts/transactions', () => {
    let a: string;
    let b: string;
    let times: string[];

    beforeEach(async () => {
      await api.reset();
      a = (await createAccount()).body.account_reference;
      b = (await createAccount()).body.account_reference;
      await credit(a, { amount: 10 });
      await api.advance(3_600);
      await credit(b, { amount: 20 });
      await api.advance(3_600);
      await credit(a, { amount: 30 });
      const all = await api.call('GET', '/merchants/virtual-accounts/transactions');
      times = (all.body.data as Json[])
        .map((t) => t.created_at as string)
        .sort((x, y) => Date.parse(x) - Date.parse(y));
    });

    const list = listRequest(api, '/merchants/virtual-accounts/transactions');

    function amounts(res: ApiResponse): number[] {
      return (res.body.data as Json[]).map((t) => t.amount as number).sort((x, y) => x - y);
    }

    it('should list every transaction with total, page and pageSize at the top level', async () => {
      const res = await list('');
      expectSuccess(res);
      expect(res.body).toMatchObject({ total: 3, page: 1, pageSize: 10 });
      expect(amounts(res)).toEqual([10, 20, 30]);
    });

    it('should filter by account_reference', async () => {
      expect(amounts(await list(`?account_reference=${a}`))).toEqual([10, 30]);
      expect(amounts(await list(`?account_reference=${b}`))).toEqual([20]);
    });

    it('should filter by status', async () => {
      expect((await list('?status=success')).body.total).toBe(3);
      expect((await list('?status=failed')).body.total).toBe(0);
    });

    it('should apply inclusive start_date and end_date on created_at', async () => {
      const [first = '', second = '', third = ''] = times;
      expect(amounts(await list(`?start_date=${encodeURIComponent(second)}`))).toEqual([20, 30]);
      expect(amounts(await list(`?end_date=${encodeURIComponent(second)}`))).toEqual([10, 20]);
      expect(
        amounts(
          await list(
            `?start_date=${encodeURIComponent(first)}&end_date=${encodeURIComponent(third)}`,
          ),
        ),
      ).toEqual([10, 20, 30]);
    });

    it('should paginate with a total that matches across pages', async () => {
      const first = await list('?page_size=2');
      const second = await list('?page_size=2&page=2');
      expectTwoPages(first.body, second.body, 3, 2);
      expect([...amounts(first), ...amounts(second)].sort((x, y) => x - y)).toEqual([10, 20, 30]);
    });

    itRejectsBadListQuery(list, {
      paging: [
        ['page_size', '0'],
        ['page_size', '101'],
        ['page', '0'],
      ],
      status: 'frozen',
    });
  });
});
