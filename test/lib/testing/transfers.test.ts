/**
 * Contract tests of the sandbox emulator's transfers (disbursements) over real HTTP
 * (docs/payments-api.md, "Endpoints > Transfers", "States > Transfer"; docs/sandbox.md): initialize,
 * balance, settlement, magic accounts, webhooks, verify and list.
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS } from '../../../lib/testing/webhooks.ts';
import { creationRequests, listRequest } from '../../support/endpoints.ts';
import {
  expectError,
  expectIsoTimestamp,
  expectSignedWebhook,
  expectSuccess,
  expectTimestamps,
  expectTwoPages,
  expectValidation,
  expectWebhookEnvelope,
} from '../../support/expect-api.ts';
import { itRejectsBadListQuery } from '../../support/list-suites.ts';
import { transferBody } from '../../support/payloads.ts';
import {
  type ApiResponse,
  type Json,
  OPENING_BALANCE,
  startSandboxClient,
  toMinor,
  uniqueRef,
} from '../../support/sandbox-client.ts';
import { useSandboxClient, useWebhookReceiver } from '../../support/sandbox-fixture.ts';
import { webhookWith } from '../../support/webhook-receiver.ts';

const FAILS = '0000000000';
const EXPIRES = '0000000001';
const REVERSES = '0000000002';

// Transfers name their own webhook_url: the sandbox has no default one here.
const hooks = useWebhookReceiver();
const api = useSandboxClient();

beforeEach(async () => {
  await api.reset();
});

const { send, create: initialize } = creationRequests(
  api,
  '/disbursements/initialize',
  transferBody,
);

/** Waits (ticking the sandbox) for the first webhook about transfer `reference`. */
function hookFor(reference: string) {
  return hooks.waitFor(webhookWith('reference', reference), { tick: api.tick });
}

async function verify(reference: string): Promise<ApiResponse> {
  return api.call('GET', `/disbursements/verify/${encodeURIComponent(reference)}`);
}

async function statusOf(reference: string): Promise<string> {
  return (await verify(reference)).body.data.transfer_status;
}

/** Settles everything twice, so a success that is later reversed has time to reverse. */
async function settleFully(): Promise<void> {
  await api.settle();
  await api.settle();
}

describe('sandbox transfers', () => {
  describe('POST /disbursements/initialize', () => {
    it('should accept the transfer as processing and echo it under data', async () => {
      const reference = uniqueRef('tr');
      const res = await initialize({ reference, amount: 2500.5, narration: 'May payout' });
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({
        reference,
        amount: 2500.5,
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
        narration: 'May payout',
        status: 'processing',
      });
      expectIsoTimestamp(res.body.data.created_at);
    });

    it('should debit the balance by exactly the amount plus the fee shown in verify', async () => {
      const before = await api.balanceMinor();
      expect(before).toBe(toMinor(OPENING_BALANCE));
      const { reference } = (await initialize({ amount: 2500.5 })).body.data;
      const fee = (await verify(reference)).body.data.fee;
      expect(typeof fee).toBe('number');
      expect(fee).toBeGreaterThanOrEqual(0);
      expect(await api.balanceMinor()).toBe(before - toMinor(2500.5) - toMinor(fee));
    });

    it('should accept the amount as a decimal string', async () => {
      const { reference } = (await initialize({ amount: '100.10' })).body.data;
      expect((await verify(reference)).body.data.amount).toBe(100.1);
    });

    it('should keep the balance exact over many decimal amounts', async () => {
      const amounts = [0.1, 0.2, 0.7, 1.15, 2.35, 10.01, 0.03];
      let expected = toMinor(OPENING_BALANCE);
      for (const amount of amounts) {
        const { reference } = (await initialize({ amount })).body.data;
        expected -= toMinor(amount) + toMinor((await verify(reference)).body.data.fee);
      }
      const { balance } = await api.state();
      expect(balance).toBe(expected / 100);
    });

    it('should reject a transfer above the balance with 409 Insufficient funds', async () => {
      const res = await send({ amount: OPENING_BALANCE + 0.01 });
      expectError(res, 409, 'insufficient_funds', 'Insufficient funds');
    });

    it('should reject a transfer whose amount plus fee exceeds the balance by 0.01', async () => {
      // Documented fee above 50,000.00: 50.00, so 999,950.01 + 50.00 > 1,000,000.00.
      const res = await send({ amount: '999950.01' });
      expectError(res, 409, 'insufficient_funds', 'Insufficient funds');
      expect(await api.balanceMinor()).toBe(toMinor(OPENING_BALANCE));
    });

    it('should accept a transfer whose amount plus fee is exactly the balance', async () => {
      const res = await send({ amount: '999950.00' });
      expectSuccess(res);
      expect((await api.state()).balance).toBe(0);
    });

    it.each([
      ['0.01', 10],
      ['5000.00', 10],
      ['5000.01', 25],
      ['50000.00', 25],
      ['50000.01', 50],
    ])('should charge the documented fee for %s: %d', async (amount, fee) => {
      const { reference } = (await initialize({ amount })).body.data;
      expect((await verify(reference)).body.data.fee).toBe(fee);
    });

    it('should leave the balance unchanged and create nothing when funds are insufficient', async () => {
      const reference = uniqueRef('tr');
      const before = await api.balanceMinor();
      await send({ reference, amount: OPENING_BALANCE * 2 });
      expect(await api.balanceMinor()).toBe(before);
      expectError(await verify(reference), 404, 'not_found');
    });

    it('should reject a reused reference with 409 duplicate_reference', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference });
      const res = await send({ reference });
      expectError(res, 409, 'duplicate_reference');
    });

    it('should debit the balance only once when a reference is reused', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, amount: 1000 });
      const afterFirst = await api.balanceMinor();
      await send({ reference, amount: 1000 });
      expect(await api.balanceMinor()).toBe(afterFirst);
    });

    it('should reject a reused reference even after the first transfer settled', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference });
      await api.settle();
      const res = await send({ reference });
      expectError(res, 409, 'duplicate_reference');
    });

    it('should reject a currency other than the account currency with an issue at currency', async () => {
      const before = await api.balanceMinor();
      const res = await send({ currency: 'USD' });
      expectValidation(res, ['currency']);
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should accept exactly one of many concurrent requests with the same reference', async () => {
      const body = transferBody({ amount: 100 });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => api.call('POST', '/disbursements/initialize', body)),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      expect(await api.balanceMinor()).toBe(toMinor(OPENING_BALANCE) - toMinor(100) - toMinor(10));
    });

    it('should never overdraw the balance under concurrent transfers', async () => {
      // 50,000.00 + 25.00 fee each: 19 fit in 1,000,000.00, the 20th does not.
      const results = await Promise.all(Array.from({ length: 25 }, () => send({ amount: 50_000 })));
      expect(results.filter((r) => r.status === 200)).toHaveLength(19);
      for (const rejected of results.filter((r) => r.status !== 200)) {
        expectError(rejected, 409, 'insufficient_funds', 'Insufficient funds');
      }
      expect(await api.balanceMinor()).toBe(toMinor(OPENING_BALANCE) - 19 * toMinor(50_025));
    });

    it('should list every missing required field as an issue', async () => {
      const res = await api.call('POST', '/disbursements/initialize', {});
      expectValidation(res, [
        'customer_name',
        'customer_email',
        'reference',
        'amount',
        'currency',
        'destination_bank_code',
        'destination_bank_account',
        'destination_bank_name',
      ]);
    });

    it('should list mistyped optional fields as issues', async () => {
      const res = await send({ narration: 5, metadata: [1], webhook_url: 12 });
      expectValidation(res, ['narration', 'metadata', 'webhook_url']);
    });

    it.each([
      ['zero', 0],
      ['a negative amount', -10],
      ['three fraction digits', 10.005],
      ['a string with three fraction digits', '10.005'],
      ['a non-numeric string', 'lots'],
    ])('should reject %s as amount with an issue at amount', async (_label, amount) => {
      const before = await api.balanceMinor();
      const res = await send({ amount });
      expectValidation(res, ['amount']);
      expect(await api.balanceMinor()).toBe(before);
    });
  });

  describe('settlement', () => {
    it('should stay processing before 5 sandbox seconds have passed', async () => {
      const { reference } = (await initialize()).body.data;
      await api.advance(3);
      await api.tick();
      expect(await statusOf(reference)).toBe('processing');
    });

    it('should settle as success once 5 sandbox seconds have passed', async () => {
      const { reference } = (await initialize()).body.data;
      await api.settle();
      expect(await statusOf(reference)).toBe('success');
    });

    it('should settle lazily on the next request after the clock advanced', async () => {
      // A server whose background settlement never runs during the test.
      const lazy = await startSandboxClient({ tickMs: 3_600_000 });
      try {
        const reference = uniqueRef('tr');
        expectSuccess(
          await lazy.call('POST', '/disbursements/initialize', transferBody({ reference })),
        );
        await lazy.advance(6);
        const res = await lazy.call('GET', `/disbursements/verify/${reference}`);
        expect(res.body.data.transfer_status).toBe('success');
      } finally {
        await lazy.close();
      }
    });

    it('should settle lazily before answering the state control', async () => {
      const lazy = await startSandboxClient({ tickMs: 3_600_000 });
      try {
        const before = await lazy.balanceMinor();
        await lazy.call(
          'POST',
          '/disbursements/initialize',
          transferBody({ destination_bank_account: FAILS, amount: 100 }),
        );
        expect(await lazy.balanceMinor()).toBe(before - toMinor(100) - toMinor(10));
        await lazy.advance(6);
        expect(await lazy.balanceMinor()).toBe(before);
      } finally {
        await lazy.close();
      }
    });

    it('should echo any two-decimal amount exactly and debit exactly amount + fee', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.boolean(),
          async (cents, asString) => {
            const amount = asString ? (cents / 100).toFixed(2) : cents / 100;
            const before = await api.balanceMinor();
            const { reference } = (await initialize({ amount })).body.data;
            const data = (await verify(reference)).body.data;
            expect(data.amount).toBe(cents / 100);
            expect((await api.state()).balance).toBe((before - cents - toMinor(data.fee)) / 100);
          },
        ),
        { numRuns: 40 },
      );
    });

    it('should keep the debit on success', async () => {
      const before = await api.balanceMinor();
      const { reference } = (await initialize({ amount: 400 })).body.data;
      const fee = (await verify(reference)).body.data.fee;
      await settleFully();
      expect(await api.balanceMinor()).toBe(before - toMinor(400) - toMinor(fee));
    });

    it('should move updated_at to the settlement time', async () => {
      const { reference } = (await initialize()).body.data;
      const created = (await verify(reference)).body.data;
      await api.settle();
      const settled = (await verify(reference)).body.data;
      expect(settled.created_at).toBe(created.created_at);
      expect(Date.parse(settled.updated_at)).toBeGreaterThan(Date.parse(created.created_at));
    });

    it('should stamp updated_at with the due settlement time even when the clock jumped far', async () => {
      const { reference } = (await initialize()).body.data;
      const created = Date.parse((await verify(reference)).body.data.created_at);
      await api.advance(3_600);
      const settled = (await verify(reference)).body.data;
      expect(settled.transfer_status).toBe('success');
      expect(Date.parse(settled.updated_at) - created).toBe(5_000);
    });

    it(`should fail a transfer to ${FAILS} and restore the balance`, async () => {
      const before = await api.balanceMinor();
      const { reference } = (await initialize({ destination_bank_account: FAILS, amount: 777.77 }))
        .body.data;
      expect(await api.balanceMinor()).toBeLessThan(before);
      await settleFully();
      expect(await statusOf(reference)).toBe('failed');
      expect(await api.balanceMinor()).toBe(before);
    });

    it(`should expire a transfer to ${EXPIRES} and restore the balance`, async () => {
      const before = await api.balanceMinor();
      const { reference } = (
        await initialize({ destination_bank_account: EXPIRES, amount: 123.45 })
      ).body.data;
      await settleFully();
      expect(await statusOf(reference)).toBe('expired');
      expect(await api.balanceMinor()).toBe(before);
    });

    it(`should reverse a transfer to ${REVERSES} after success and restore the balance`, async () => {
      const before = await api.balanceMinor();
      const { reference } = (
        await initialize({ destination_bank_account: REVERSES, amount: 50.05 })
      ).body.data;
      await settleFully();
      expect(await statusOf(reference)).toBe('reversed');
      expect(await api.balanceMinor()).toBe(before);
    });

    it(`should send disbursement_success for ${REVERSES} before reversing it`, async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, destination_bank_account: REVERSES, webhook_url: hooks.url });
      await settleFully();
      const hook = await hookFor(reference);
      expect(hook.body.event_type).toBe('disbursement_success');
    });

    it('should restore only the failed transfer when others succeed', async () => {
      const before = await api.balanceMinor();
      const ok = (await initialize({ amount: 300 })).body.data.reference;
      await initialize({ amount: 200, destination_bank_account: FAILS });
      const fee = (await verify(ok)).body.data.fee;
      await settleFully();
      expect(await api.balanceMinor()).toBe(before - toMinor(300) - toMinor(fee));
    });

    it('should report counts of transfers in /__sandbox/state', async () => {
      await initialize();
      await initialize();
      expect((await api.state()).counts.transfers).toBe(2);
    });
  });

  describe('disbursement_success webhook', () => {
    it('should post the spec envelope to the transfer webhook_url on success', async () => {
      const reference = uniqueRef('tr');
      const metadata = { batch: 'B-9' };
      await initialize({ reference, amount: 88.8, metadata, webhook_url: hooks.url });
      await api.settle();
      const hook = await hookFor(reference);
      expect(hook.body).toMatchObject({
        event_type: 'disbursement_success',
        data: { reference, amount: 88.8, currency: 'NGN', metadata },
      });
      expectWebhookEnvelope(hook.body);
    });

    it('should sign the webhook with the merchant secret', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, webhook_url: hooks.url });
      await api.settle();
      const hook = await hookFor(reference);
      await expectSignedWebhook(hook);
    });

    it('should not send the webhook while the transfer is processing', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, webhook_url: hooks.url });
      await api.tick();
      expect(hooks.received.some(webhookWith('reference', reference))).toBe(false);
    });

    it.each([
      [FAILS, 'disbursement_failed', 'failed'],
      [EXPIRES, 'disbursement_expired', 'expired'],
    ])(
      'should send the documented event for a transfer to %s: %s',
      async (account, type, status) => {
        const reference = uniqueRef('tr');
        await initialize({ reference, destination_bank_account: account, webhook_url: hooks.url });
        await settleFully();
        const hook = await hookFor(reference);
        expect(hook.body.event_type).toBe(type);
        expect(hook.body.status).toBe(status);
      },
    );

    it(`should send disbursement_reversed after disbursement_success for ${REVERSES}`, async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, destination_bank_account: REVERSES, webhook_url: hooks.url });
      await settleFully();
      await hooks.waitFor(
        (h) =>
          h.body?.data?.reference === reference && h.body.event_type === 'disbursement_reversed',
        { tick: api.tick },
      );
      const types = hooks.received
        .filter(webhookWith('reference', reference))
        .map((h) => h.body.event_type);
      expect(types).toEqual(['disbursement_success', 'disbursement_reversed']);
    });

    it('should not send disbursement_success for a failed transfer', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference, destination_bank_account: FAILS, webhook_url: hooks.url });
      await settleFully();
      const records = (await api.webhooks()).filter(
        (w) => w.event_type === 'disbursement_success' && w.body?.data?.reference === reference,
      );
      expect(records).toEqual([]);
    });

    it('should record a webhook without any target as no_target', async () => {
      const reference = uniqueRef('tr');
      await initialize({ reference });
      await api.settle();
      const record = (await api.webhooks()).find(webhookWith('reference', reference));
      expect(record?.event_type).toBe('disbursement_success');
      expect(record?.delivery).toBe('no_target');
    });

    it('should record a delivery the receiver answered with 500 as failed', async () => {
      const reference = uniqueRef('tr');
      hooks.respondWith = 500;
      // Without retries the first failure is final (retries: test/lib/testing/timing-faults.test.ts).
      await api.control('webhooks/retries', { delays_ms: [] });
      try {
        await initialize({ reference, webhook_url: hooks.url });
        await api.settle();
        await hookFor(reference);
        await api.tick();
        const record = (await api.webhooks()).find(webhookWith('reference', reference));
        expect(record).toMatchObject({ delivery: 'failed', response_status: 500 });
      } finally {
        hooks.respondWith = 200;
        await api.control('webhooks/retries', { delays_ms: DEFAULT_WEBHOOK_RETRY_DELAYS_MS });
      }
    });
  });

  describe('GET /disbursements/verify/{reference}', () => {
    it('should return every spec field with transfer_status and fee', async () => {
      const reference = uniqueRef('tr');
      const metadata = { invoice: 'INV-1' };
      await initialize({
        reference,
        amount: 1500,
        metadata,
        customer_name: 'Bola Ade',
        customer_email: 'bola@example.com',
      });
      const res = await verify(reference);
      expectSuccess(res);
      const data: Json = res.body.data;
      expect(data).toMatchObject({
        reference,
        amount: 1500,
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
        customer_name: 'Bola Ade',
        customer_email: 'bola@example.com',
        narration: 'Payout',
        transfer_status: 'processing',
        metadata,
      });
      expect(typeof data.fee).toBe('number');
      expectTimestamps(data);
    });

    it('should answer 404 not_found for an unknown reference', async () => {
      expectError(await verify(uniqueRef('missing')), 404, 'not_found');
    });

    it('should require signature headers', async () => {
      const { reference } = (await initialize()).body.data;
      const res = await api.call('GET', `/disbursements/verify/${reference}`, undefined, {
        sign: false,
      });
      expectError(res, 401, 'unauthorized');
    });
  });

  describe('GET /merchants/disbursements', () => {
    let refs: { day1ok: string; day1fail: string; day2: string; day3: string };
    let days: string[];

    beforeEach(async () => {
      refs = {
        day1ok: uniqueRef('a'),
        day1fail: uniqueRef('b'),
        day2: uniqueRef('c'),
        day3: uniqueRef('d'),
      };
      days = [];
      days.push((await api.state()).now.slice(0, 10));
      await initialize({ reference: refs.day1ok, customer_email: 'x@example.com' });
      await initialize({
        reference: refs.day1fail,
        customer_email: 'y@example.com',
        destination_bank_account: FAILS,
      });
      await settleFully();
      await api.advance(86_400);
      days.push((await api.state()).now.slice(0, 10));
      await initialize({ reference: refs.day2, customer_email: 'x@example.com' });
      await settleFully();
      await api.advance(86_400);
      days.push((await api.state()).now.slice(0, 10));
      await initialize({ reference: refs.day3, customer_email: 'y@example.com' });
    });

    const list = listRequest(api, '/merchants/disbursements');

    function references(res: ApiResponse): string[] {
      return (res.body.data.data as Json[]).map((t) => t.reference).sort();
    }

    it('should nest total, page, pageSize and data under data', async () => {
      const res = await list('');
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ total: 4, page: 1, pageSize: 10 });
      expect(references(res)).toEqual(Object.values(refs).sort());
    });

    it('should include fee and transfer_status in each record', async () => {
      const res = await list('?status=failed');
      const [transfer] = res.body.data.data as Json[];
      expect(transfer.reference).toBe(refs.day1fail);
      expect(transfer.transfer_status).toBe('failed');
      expect(typeof transfer.fee).toBe('number');
    });

    it.each([
      ['success', ['day1ok', 'day2']],
      ['failed', ['day1fail']],
      ['processing', ['day3']],
      ['reversed', []],
      ['expired', []],
    ] as const)('should filter by status %s', async (status, keys) => {
      const res = await list(`?status=${status}`);
      expect(res.body.data.total).toBe(keys.length);
      expect(references(res)).toEqual(keys.map((key) => refs[key]).sort());
    });

    it('should filter by recipient customer_email', async () => {
      const res = await list(`?customer_email=${encodeURIComponent('y@example.com')}`);
      expect(references(res)).toEqual([refs.day1fail, refs.day3].sort());
    });

    it('should include the start_date day itself', async () => {
      const res = await list(`?start_date=${days[1]}`);
      expect(references(res)).toEqual([refs.day2, refs.day3].sort());
    });

    it('should include the end_date day itself', async () => {
      const res = await list(`?end_date=${days[1]}`);
      expect(references(res)).toEqual([refs.day1ok, refs.day1fail, refs.day2].sort());
    });

    it('should select a single day when start_date equals end_date', async () => {
      const res = await list(`?start_date=${days[1]}&end_date=${days[1]}`);
      expect(res.body.data.total).toBe(1);
      expect(references(res)).toEqual([refs.day2]);
    });

    it('should paginate with a total that matches across pages', async () => {
      const first = await list('?page_size=3');
      const second = await list('?page_size=3&page=2');
      expectTwoPages(first.body.data, second.body.data, 4, 3);
      expect([...references(first), ...references(second)].sort()).toEqual(
        Object.values(refs).sort(),
      );
    });

    itRejectsBadListQuery(list, {
      paging: [
        ['page_size', '0'],
        ['page_size', '101'],
        ['page', '0'],
        ['page', 'x'],
      ],
      status: 'done',
    });

    it('should reject a start_date that is not YYYY-MM-DD with 400 naming start_date', async () => {
      expectValidation(await list('?start_date=01/02/2026'), ['start_date']);
    });
  });
});
