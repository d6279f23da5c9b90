/**
 * Contract tests of the sandbox emulator's refunds over real HTTP (docs/payments-api.md,
 * "Endpoints > Refunds", "States > Refund", "Limits"): initialize with the sum rule,
 * duplicates, settlement, retrieve, per-payment list, merchant list and counts.
 */
import fc from 'fast-check';
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
import { paymentBody, refundBody } from '../../support/payloads.ts';
import { type ApiResponse, type Json, toMinor, uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient, useWebhookReceiver } from '../../support/sandbox-fixture.ts';
import { webhookWith } from '../../support/webhook-receiver.ts';

const api = useSandboxClient();

const initializePayment = creationRequests(api, '/payments/initialize', paymentBody).create;

/** Creates a payment and completes it with `outcome`; returns its reference. */
async function payment(
  amount: string,
  outcome: 'success' | 'failed' | 'abandoned' | null = 'success',
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const res = await initializePayment({ amount, ...overrides });
  const reference: string = res.body.reference;
  if (outcome !== null) await api.complete(reference, outcome);
  return reference;
}

async function refund(
  paymentReference: string,
  overrides: Record<string, unknown> = {},
): Promise<ApiResponse> {
  return api.call('POST', '/refunds/initialize', refundBody(paymentReference, overrides));
}

async function retrieve(refundReference: string): Promise<ApiResponse> {
  return api.call('GET', `/refunds/${encodeURIComponent(refundReference)}`);
}

/** Splits `total` cents into `weights.length` (at most `total`) positive integer parts. */
function splitCents(total: number, weights: number[]): number[] {
  const used = weights.slice(0, total);
  const sum = used.reduce((a, b) => a + b, 0);
  const parts = used.map((w) => Math.max(1, Math.floor((total * w) / sum)));
  let rest = total - parts.reduce((a, b) => a + b, 0);
  for (let i = 0; rest !== 0; i = (i + 1) % parts.length) {
    const step = rest > 0 ? 1 : -1;
    if ((parts[i] ?? 0) + step >= 1) {
      parts[i] = (parts[i] ?? 0) + step;
      rest -= step;
    }
  }
  return parts;
}

describe('sandbox refunds', () => {
  describe('POST /refunds/initialize', () => {
    it('should queue a full refund and echo both references', async () => {
      const pay = await payment('1000.00');
      const refundReference = uniqueRef('rf');
      const res = await refund(pay, { refund_reference: refundReference, amount: 1000 });
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.refund_reference).toBe(refundReference);
      expect(res.body.payment_reference).toBe(pay);
      expect((await retrieve(refundReference)).body.data.refund_status).toBe('processing');
    });

    it('should accept a partial refund', async () => {
      const pay = await payment('1000.00');
      const res = await refund(pay, { amount: 250.5 });
      expectSuccess(res);
      expect((await retrieve(res.body.refund_reference)).body.data.amount).toBe(250.5);
    });

    it('should accept the amount as a decimal string', async () => {
      const pay = await payment('10.00');
      const res = await refund(pay, { amount: '2.50' });
      expectSuccess(res);
      expect((await retrieve(res.body.refund_reference)).body.data.amount).toBe(2.5);
    });

    it('should allow refunds of 0.10 and 0.20 against a 0.30 payment', async () => {
      const pay = await payment('0.30');
      expectSuccess(await refund(pay, { amount: 0.1 }));
      expectSuccess(await refund(pay, { amount: 0.2 }));
    });

    it('should reject one more 0.01 once 0.10 + 0.20 refunded a 0.30 payment', async () => {
      const pay = await payment('0.30');
      await refund(pay, { amount: 0.1 });
      await refund(pay, { amount: 0.2 });
      const res = await refund(pay, { amount: 0.01 });
      expectError(res, 422, 'refund_exceeds_payment');
    });

    it('should accept any split of a payment into refunds and reject one cent more', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 3, max: 1_000_000 }),
          fc.array(fc.integer({ min: 1, max: 1_000 }), { minLength: 1, maxLength: 4 }),
          async (totalCents, weights) => {
            // Split totalCents into positive parts proportional to the weights.
            const parts = splitCents(totalCents, weights);
            const pay = await payment((totalCents / 100).toFixed(2));
            for (const cents of parts) {
              expectSuccess(await refund(pay, { amount: cents / 100 }));
            }
            expectError(await refund(pay, { amount: 0.01 }), 422, 'refund_exceeds_payment');
          },
        ),
        { numRuns: 25 },
      );
    });

    it('should reject a single refund above the payment amount', async () => {
      const pay = await payment('100.00');
      expectError(await refund(pay, { amount: 100.01 }), 422, 'refund_exceeds_payment');
    });

    it('should reject a partial refund that would take the sum above the payment', async () => {
      const pay = await payment('100.00');
      expectSuccess(await refund(pay, { amount: 60 }));
      expectError(await refund(pay, { amount: 40.01 }), 422, 'refund_exceeds_payment');
      expectSuccess(await refund(pay, { amount: 40 }));
    });

    it('should count settled refunds towards the sum', async () => {
      const pay = await payment('50.00');
      expectSuccess(await refund(pay, { amount: 50 }));
      await api.settle();
      expectError(await refund(pay, { amount: 0.01 }), 422, 'refund_exceeds_payment');
    });

    it('should not create the refund it rejected for exceeding the payment', async () => {
      const pay = await payment('100.00');
      const refundReference = uniqueRef('rf');
      await refund(pay, { refund_reference: refundReference, amount: 200 });
      expectError(await retrieve(refundReference), 404, 'not_found');
    });

    it('should reject a reused refund_reference with 409 Refund already exists', async () => {
      const pay = await payment('100.00');
      const refundReference = uniqueRef('rf');
      expectSuccess(await refund(pay, { refund_reference: refundReference, amount: 1 }));
      const res = await refund(pay, { refund_reference: refundReference, amount: 1 });
      expectError(res, 409, 'refund_already_exists', 'Refund already exists');
    });

    it('should reject a refund_reference reused on another payment with 409', async () => {
      const refundReference = uniqueRef('rf');
      expectSuccess(
        await refund(await payment('10.00'), { refund_reference: refundReference, amount: 1 }),
      );
      const res = await refund(await payment('10.00'), {
        refund_reference: refundReference,
        amount: 1,
      });
      expectError(res, 409, 'refund_already_exists', 'Refund already exists');
    });

    it('should keep the first refund when a duplicate is rejected', async () => {
      const pay = await payment('100.00');
      const refundReference = uniqueRef('rf');
      await refund(pay, { refund_reference: refundReference, amount: 5 });
      await refund(pay, { refund_reference: refundReference, amount: 7 });
      expect((await retrieve(refundReference)).body.data.amount).toBe(5);
    });

    it('should answer 404 not_found for an unknown payment', async () => {
      expectError(await refund(uniqueRef('missing')), 404, 'not_found');
    });

    it.each([
      ['processing', null],
      ['failed', 'failed'],
      ['abandoned', 'abandoned'],
    ] as const)(
      'should reject a refund of a %s payment with 409 payment_not_refundable',
      async (_label, outcome) => {
        const pay = await payment('100.00', outcome);
        const refundReference = uniqueRef('rf');
        const res = await refund(pay, { refund_reference: refundReference });
        expectError(res, 409, 'payment_not_refundable');
        expectError(await retrieve(refundReference), 404, 'not_found');
      },
    );

    it('should reject a currency that differs from the payment with an issue at currency', async () => {
      const pay = await payment('100.00');
      const refundReference = uniqueRef('rf');
      const res = await refund(pay, { refund_reference: refundReference, currency: 'USD' });
      expectValidation(res, ['currency']);
      expectError(await retrieve(refundReference), 404, 'not_found');
    });

    it('should reject an account_number without bank_code with an issue at bank_code', async () => {
      const pay = await payment('100.00');
      const res = await refund(pay, { account_number: '0123456789' });
      expectValidation(res, ['bank_code']);
    });

    it('should accept an account_number with a bank_code', async () => {
      const pay = await payment('100.00');
      const res = await refund(pay, { account_number: '0123456789', bank_code: '058' });
      expectSuccess(res);
    });

    it('should list every missing required field as an issue', async () => {
      const res = await api.call('POST', '/refunds/initialize', {});
      expectValidation(res, ['payment_reference', 'refund_reference', 'currency', 'amount']);
    });

    it.each([
      ['zero', 0],
      ['a negative amount', -1],
      ['three fraction digits', 0.001],
    ])('should reject %s as amount with an issue at amount', async (_label, amount) => {
      const pay = await payment('100.00');
      expectValidation(await refund(pay, { amount }), ['amount']);
    });
  });

  describe('settlement', () => {
    it('should settle a processing refund as success after 5 sandbox seconds', async () => {
      const pay = await payment('100.00');
      const { refund_reference: ref } = (await refund(pay)).body;
      await api.settle();
      expect((await retrieve(ref)).body.data.refund_status).toBe('success');
    });

    it('should debit the merchant balance by the refund amount when queued', async () => {
      const pay = await payment('100.00');
      const before = await api.balanceMinor();
      await refund(pay, { amount: 12.34 });
      expect(await api.balanceMinor()).toBe(before - 1234);
      await api.settle();
      expect(await api.balanceMinor()).toBe(before - 1234);
    });

    it('should fail a refund to account 0000000000 and return the amount to the balance', async () => {
      const pay = await payment('100.00');
      const before = await api.balanceMinor();
      const { refund_reference: ref } = (
        await refund(pay, { amount: 40, account_number: '0000000000', bank_code: '058' })
      ).body;
      await api.settle();
      expect((await retrieve(ref)).body.data.refund_status).toBe('failed');
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should not count a failed refund towards the sum', async () => {
      const pay = await payment('100.00');
      await refund(pay, { amount: 100, account_number: '0000000000', bank_code: '058' });
      await api.settle();
      expectSuccess(await refund(pay, { amount: 100 }));
    });

    it('should mark the payment reversed once successful refunds reach its amount', async () => {
      const pay = await payment('100.00');
      await refund(pay, { amount: 40 });
      await api.settle();
      expect((await api.call('GET', `/payments/verify/${pay}`)).body.data.status).toBe('success');
      await refund(pay, { amount: 60 });
      await api.settle();
      expect((await api.call('GET', `/payments/verify/${pay}`)).body.data.status).toBe('reversed');
    });

    it('should reject a refund above the balance with 409 insufficient_funds', async () => {
      const pay = await payment('100.00');
      const { balance } = await api.state();
      await api.call('POST', '/disbursements/initialize', {
        customer_name: 'Drain',
        customer_email: 'drain@example.com',
        reference: uniqueRef('tr'),
        amount: (toMinor(balance) - 5_000) / 100,
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
      });
      try {
        expect(await api.balanceMinor()).toBe(0);
        expectError(
          await refund(pay, { amount: 1 }),
          409,
          'insufficient_funds',
          'Insufficient funds',
        );
      } finally {
        // Later tests need a balance to refund from.
        await api.reset();
      }
    });

    it('should still be processing before 5 sandbox seconds', async () => {
      const pay = await payment('100.00');
      const { refund_reference: ref } = (await refund(pay)).body;
      await api.advance(2);
      await api.tick();
      expect((await retrieve(ref)).body.data.refund_status).toBe('processing');
    });
  });

  describe('refund webhooks', () => {
    // Refund events go to the payment's webhook_url (the sandbox has no default one here).
    const hooks = useWebhookReceiver();

    /** Refunds a paid payment that names `hooks`, settles, and waits for the refund's webhook. */
    async function settledRefundHook(overrides: Record<string, unknown>) {
      const pay = await payment('100.00', 'success', { webhook_url: hooks.url });
      const { refund_reference: ref } = (await refund(pay, overrides)).body;
      await api.settle();
      const hook = await hooks.waitFor(webhookWith('refund_reference', ref), { tick: api.tick });
      return { pay, ref, hook };
    }

    it('should send a signed refund_success to the payment webhook_url when settled', async () => {
      const { pay, ref, hook } = await settledRefundHook({ amount: 25 });
      expect(hook.body).toMatchObject({
        event_type: 'refund_success',
        status: 'success',
        data: {
          refund_reference: ref,
          payment_reference: pay,
          amount: 25,
          currency: 'NGN',
          refund_status: 'success',
        },
      });
      await expectSignedWebhook(hook);
    });

    it('should send refund_failed for a refund to account 0000000000', async () => {
      const { hook } = await settledRefundHook({
        amount: 25,
        account_number: '0000000000',
        bank_code: '058',
      });
      expect(hook.body.event_type).toBe('refund_failed');
      expect(hook.body.data.refund_status).toBe('failed');
    });
  });

  describe('GET /refunds/{refund_reference}', () => {
    it('should return every spec field of the refund', async () => {
      const pay = await payment('100.00');
      const refundReference = uniqueRef('rf');
      await refund(pay, { refund_reference: refundReference, amount: 12.34, reason: 'Damaged' });
      const res = await retrieve(refundReference);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        refund_reference: refundReference,
        payment_reference: pay,
        currency: 'NGN',
        amount: 12.34,
        reason: 'Damaged',
        refund_status: 'processing',
      });
      expectTimestamps(res.body.data);
    });

    it('should answer 404 not_found for an unknown refund', async () => {
      expectError(await retrieve(uniqueRef('missing')), 404, 'not_found');
    });
  });

  describe('GET /refunds/transactions/{payment_reference}', () => {
    it('should list every refund of the payment and no other', async () => {
      const pay = await payment('100.00');
      const other = await payment('100.00');
      const a = (await refund(pay, { amount: 1 })).body.refund_reference;
      const b = (await refund(pay, { amount: 2 })).body.refund_reference;
      await refund(other, { amount: 3 });
      const res = await api.call('GET', `/refunds/transactions/${pay}`);
      expectSuccess(res);
      const records = res.body.data as Json[];
      expect(records.map((r) => r.refund_reference).sort()).toEqual([a, b].sort());
      for (const record of records) {
        expect(record.payment_reference).toBe(pay);
        expect(record.currency).toBe('NGN');
        expect(record.refund_status).toBe('processing');
        expectIsoTimestamp(record.created_at);
      }
      expect(records.map((r) => r.amount).sort()).toEqual([1, 2]);
    });

    it('should answer 404 not_found for an unknown payment', async () => {
      expectError(
        await api.call('GET', `/refunds/transactions/${uniqueRef('missing')}`),
        404,
        'not_found',
      );
    });

    it('should answer an empty list for a payment without refunds', async () => {
      const pay = await payment('100.00');
      const res = await api.call('GET', `/refunds/transactions/${pay}`);
      expectSuccess(res);
      expect(res.body.data).toEqual([]);
    });
  });

  describe('GET /merchants/refunds', () => {
    let pay1: string;
    let pay2: string;
    let refs: { settled: string; day2a: string; day2b: string };
    let days: string[];

    beforeEach(async () => {
      await api.reset();
      days = [(await api.state()).now.slice(0, 10)];
      pay1 = await payment('100.00');
      pay2 = await payment('100.00');
      refs = { settled: uniqueRef('r1'), day2a: uniqueRef('r2'), day2b: uniqueRef('r3') };
      await refund(pay1, { refund_reference: refs.settled, amount: 10 });
      await api.settle();
      await api.advance(86_400);
      days.push((await api.state()).now.slice(0, 10));
      await refund(pay1, { refund_reference: refs.day2a, amount: 20 });
      await refund(pay2, { refund_reference: refs.day2b, amount: 30 });
    });

    const list = listRequest(api, '/merchants/refunds');

    function references(res: ApiResponse): string[] {
      return (res.body.data.records as Json[]).map((r) => r.refund_reference).sort();
    }

    it('should nest total, page, pageSize and records under data', async () => {
      const res = await list('');
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ total: 3, page: 1, pageSize: 10 });
      expect(references(res)).toEqual(Object.values(refs).sort());
    });

    it('should filter by status', async () => {
      const res = await list('?status=processing');
      expect(res.body.data.total).toBe(2);
      expect(references(res)).toEqual([refs.day2a, refs.day2b].sort());
      expect(references(await list('?status=success'))).toEqual([refs.settled]);
      expect((await list('?status=failed')).body.data.total).toBe(0);
    });

    it('should filter by payment_reference', async () => {
      const res = await list(`?payment_reference=${pay1}`);
      expect(references(res)).toEqual([refs.settled, refs.day2a].sort());
    });

    it('should include refunds created on start_date and on end_date', async () => {
      expect(references(await list(`?start_date=${days[1]}`))).toEqual(
        [refs.day2a, refs.day2b].sort(),
      );
      expect(references(await list(`?end_date=${days[0]}`))).toEqual([refs.settled]);
      expect((await list(`?start_date=${days[0]}&end_date=${days[1]}`)).body.data.total).toBe(3);
    });

    it('should paginate with a total that matches across pages', async () => {
      const first = await list('?page_size=2');
      const second = await list('?page_size=2&page=2');
      expectTwoPages(first.body.data, second.body.data, 3, 2);
      expect([...references(first), ...references(second)].sort()).toEqual(
        Object.values(refs).sort(),
      );
    });

    itRejectsBadListQuery(list, {
      paging: [
        ['page_size', '0'],
        ['page_size', '101'],
        ['page', '0'],
      ],
      status: 'reversed',
    });
  });

  describe('GET /refunds/count-by-status', () => {
    beforeEach(async () => {
      await api.reset();
    });

    it('should answer zero counts for every status when there are no refunds', async () => {
      const res = await api.call('GET', '/refunds/count-by-status');
      expectSuccess(res);
      expect(res.body.data).toEqual({ processing: 0, success: 0, failed: 0 });
    });

    it('should count refunds by their current status', async () => {
      const pay = await payment('100.00');
      await refund(pay, { amount: 1 });
      await refund(pay, { amount: 2 });
      await refund(pay, { amount: 4, account_number: '0000000000', bank_code: '058' });
      await api.settle();
      await refund(pay, { amount: 3 });
      const res = await api.call('GET', '/refunds/count-by-status');
      expect(res.body.data).toEqual({ processing: 1, success: 2, failed: 1 });
    });
  });
});
