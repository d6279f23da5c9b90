/**
 * Contract tests of the sandbox emulator's payments over real HTTP
 * (docs/payments-api.md, "Endpoints > Payments"; docs/sandbox.md): initialize, verify, checkout, list, balance, webhooks.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { verifyRequestSignature } from '../../../lib/signing.ts';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS } from '../../../lib/testing/webhooks.ts';
import { findChoice, openCheckout, submit } from '../../support/checkout-form.ts';
import { creationRequests, listRequest } from '../../support/endpoints.ts';
import {
  expectError,
  expectSignedWebhook,
  expectSuccess,
  expectTimestamps,
  expectTwoPages,
  expectValidation,
  expectWebhookEnvelope,
} from '../../support/expect-api.ts';
import { itRejectsBadListQuery } from '../../support/list-suites.ts';
import { paymentBody } from '../../support/payloads.ts';
import { type ApiResponse, type Json, toMinor, uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient, useWebhookReceiver } from '../../support/sandbox-fixture.ts';
import { startWebhookReceiver, webhookWith } from '../../support/webhook-receiver.ts';

const defaultHooks = useWebhookReceiver();
const paymentHooks = useWebhookReceiver();
const api = useSandboxClient(() => ({ webhookUrl: defaultHooks.url }));

/** Runs `body` with webhook retries off, then restores the default schedule. */
async function withoutRetries(body: () => Promise<void>): Promise<void> {
  expect((await api.control('webhooks/retries', { delays_ms: [] })).status).toBe(200);
  try {
    await body();
  } finally {
    await api.control('webhooks/retries', { delays_ms: DEFAULT_WEBHOOK_RETRY_DELAYS_MS });
  }
}

const { send, create: initialize } = creationRequests(api, '/payments/initialize', paymentBody);

/** Waits (ticking the sandbox) for the webhook about payment `reference` at `paymentHooks`. */
function paymentHook(reference: string) {
  return paymentHooks.waitFor(webhookWith('reference', reference), { tick: api.tick });
}

async function verify(reference: string): Promise<ApiResponse> {
  return api.call('GET', `/payments/verify/${encodeURIComponent(reference)}`);
}

describe('sandbox payments', () => {
  describe('POST /payments/initialize', () => {
    it('should answer the supplied reference and a checkout address under /checkout/<reference>', async () => {
      const reference = uniqueRef('pay');
      const res = await initialize({ reference });
      expect(res.body.reference).toBe(reference);
      expect(res.body.authorization_url).toBe(`${api.url}/checkout/${reference}`);
    });

    it('should generate a reference when none is given', async () => {
      const body = paymentBody();
      delete body.reference;
      const res = await api.call('POST', '/payments/initialize', body);
      expectSuccess(res);
      expect(typeof res.body.reference).toBe('string');
      expect(res.body.reference.length).toBeGreaterThan(0);
      expect(res.body.authorization_url).toBe(
        `${api.url}/checkout/${encodeURIComponent(res.body.reference)}`,
      );
      expect((await verify(res.body.reference)).status).toBe(200);
    });

    it('should generate a different reference for every payment', async () => {
      const references = new Set<string>();
      for (let i = 0; i < 5; i += 1) {
        const body = paymentBody();
        delete body.reference;
        const res = await api.call('POST', '/payments/initialize', body);
        references.add(res.body.reference);
      }
      expect(references.size).toBe(5);
    });

    it('should accept the amount as a JSON number', async () => {
      const res = await initialize({ amount: 1234.5 });
      const verified = await verify(res.body.reference);
      expect(verified.body.data.amount).toBe(1234.5);
    });

    it('should keep the largest accepted amount exact', async () => {
      const res = await initialize({ amount: '999999999999.99' });
      expect((await verify(res.body.reference)).body.data.amount).toBe(999999999999.99);
    });

    it('should accept a decimal string amount and return it as a number in major units', async () => {
      const res = await initialize({ amount: '99.99' });
      const verified = await verify(res.body.reference);
      expect(verified.body.data.amount).toBe(99.99);
    });

    it('should reject a reused reference with 409 duplicate_reference', async () => {
      const reference = uniqueRef('pay');
      await initialize({ reference });
      const res = await send({ reference });
      expectError(res, 409, 'duplicate_reference');
    });

    it('should leave the first payment unchanged when a duplicate is rejected', async () => {
      const reference = uniqueRef('pay');
      await initialize({ reference, amount: '10.00' });
      await send({ reference, amount: '20.00' });
      expect((await verify(reference)).body.data.amount).toBe(10);
    });

    it('should list every missing required field as an issue', async () => {
      const res = await api.call('POST', '/payments/initialize', {});
      expectValidation(res, ['email', 'amount', 'currency']);
    });

    it('should list every mistyped field as an issue', async () => {
      const res = await api.call('POST', '/payments/initialize', {
        email: 42,
        amount: true,
        currency: 7,
        metadata: 'not an object',
        merchant_bears_fees: 'yes',
      });
      expectValidation(res, ['email', 'amount', 'currency', 'metadata', 'merchant_bears_fees']);
    });

    it.each([
      ['zero', '0'],
      ['a negative amount', '-5.00'],
      ['three fraction digits', '10.001'],
      ['a non-numeric string', 'ten'],
      ['an empty string', ''],
      ['a negative number', -1],
      ['a number with three fraction digits', 1.005],
      ['an exponent', '1e3'],
      ['more than 999,999,999,999.99', '1000000000000.00'],
    ])('should reject %s as amount with an issue at amount', async (_label, amount) => {
      const res = await send({ amount });
      expectValidation(res, ['amount']);
    });

    it('should reject a currency other than the account currency with an issue at currency', async () => {
      const res = await send({ currency: 'USD' });
      expectValidation(res, ['currency']);
    });

    it('should reject a lowercase currency code with an issue at currency', async () => {
      const res = await send({ currency: 'ngn' });
      expectValidation(res, ['currency']);
    });

    it('should reject a reference with spaces with an issue at reference', async () => {
      const res = await send({ reference: 'has space' });
      expectValidation(res, ['reference']);
    });

    it('should reject a callback_url that is not http(s) with an issue at callback_url', async () => {
      const res = await send({ callback_url: 'javascript:alert(1)' });
      expectValidation(res, ['callback_url']);
    });

    it('should reject an invalid email address with an issue at email', async () => {
      const res = await send({ email: 'not-an-email' });
      expectValidation(res, ['email']);
    });

    it('should not create the payment when validation fails', async () => {
      const reference = uniqueRef('pay');
      await send({ reference, amount: 'ten' });
      expectError(await verify(reference), 404, 'not_found');
    });
  });

  describe('GET /payments/verify/{reference}', () => {
    it('should return the payment record with every spec field', async () => {
      const reference = uniqueRef('pay');
      const metadata = { order: 'A-17', nested: { ok: true }, list: [1, 2] };
      await initialize({ reference, amount: '5000.00', email: 'eve@example.com', metadata });
      const res = await verify(reference);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      const data = res.body.data;
      expect(data).toMatchObject({
        reference,
        amount: 5000,
        currency: 'NGN',
        customer_email: 'eve@example.com',
        metadata,
      });
      expect(typeof data.transaction_id).toBe('string');
      expect(data.transaction_id.length).toBeGreaterThan(0);
      expectTimestamps(data);
    });

    it('should report an unpaid checkout as processing', async () => {
      const res = await initialize();
      expect((await verify(res.body.reference)).body.data.status).toBe('processing');
    });

    it('should report no payment_method before the customer paid', async () => {
      const res = await initialize();
      expect((await verify(res.body.reference)).body.data.payment_method).toBeNull();
    });

    it('should give every payment a distinct transaction_id', async () => {
      const a = await verify((await initialize()).body.reference);
      const b = await verify((await initialize()).body.reference);
      expect(a.body.data.transaction_id).not.toBe(b.body.data.transaction_id);
    });

    it('should answer 404 not_found for an unknown reference', async () => {
      expectError(await verify(uniqueRef('missing')), 404, 'not_found');
    });

    it('should find a reference that needs URL encoding', async () => {
      const reference = `pay/${uniqueRef('odd')}#1?x=%`;
      await initialize({ reference });
      const res = await verify(reference);
      expectSuccess(res);
      expect(res.body.data.reference).toBe(reference);
    });
  });

  describe('POST /__sandbox/payments/{reference}/complete', () => {
    it('should mark the payment success with the given payment method', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'success', 'bank_transfer');
      const data = (await verify(reference)).body.data;
      expect(data.status).toBe('success');
      expect(data.payment_method).toBe('bank_transfer');
    });

    it('should answer the completed payment with its fee under data', async () => {
      const { reference } = (await initialize({ amount: '1000.00' })).body;
      const res = await api.complete(reference, 'success', 'card');
      expect(res.body.status).toBe('success');
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({
        reference,
        status: 'success',
        amount: 1000,
        fee: 115,
        payment_method: 'card',
      });
    });

    it('should default the payment method to card', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'success');
      expect((await verify(reference)).body.data.payment_method).toBe('card');
    });

    it('should mark the payment failed', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'failed');
      expect((await verify(reference)).body.data.status).toBe('failed');
    });

    it('should mark the payment abandoned', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'abandoned');
      expect((await verify(reference)).body.data.status).toBe('abandoned');
    });

    it('should move updated_at to the sandbox time of completion', async () => {
      const { reference } = (await initialize()).body;
      const before = (await verify(reference)).body.data;
      await api.advance(60);
      await api.complete(reference, 'success');
      const after = (await verify(reference)).body.data;
      expect(after.created_at).toBe(before.created_at);
      expect(Date.parse(after.updated_at) - Date.parse(before.created_at)).toBeGreaterThanOrEqual(
        60_000,
      );
    });

    it('should refuse to complete a payment twice and keep the first outcome', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'failed');
      const res = await api.control(`payments/${reference}/complete`, { outcome: 'success' });
      expectError(res, 409, 'payment_not_processing');
      expect((await verify(reference)).body.data.status).toBe('failed');
    });

    it('should answer 404 not_found for an unknown payment', async () => {
      const res = await api.control(`payments/${uniqueRef('missing')}/complete`, {
        outcome: 'success',
      });
      expectError(res, 404, 'not_found');
    });

    it('should reject an unknown outcome with an issue at outcome', async () => {
      const { reference } = (await initialize()).body;
      const res = await api.control(`payments/${reference}/complete`, { outcome: 'maybe' });
      expectValidation(res, ['outcome']);
      expect((await verify(reference)).body.data.status).toBe('processing');
    });

    it('should reject an unknown payment method with an issue at payment_method', async () => {
      const { reference } = (await initialize()).body;
      const res = await api.control(`payments/${reference}/complete`, {
        outcome: 'success',
        payment_method: 'cash',
      });
      expectValidation(res, ['payment_method']);
    });
  });

  describe('GET /checkout/{reference}', () => {
    it('should serve an HTML page with the reference and pay and cancel choices', async () => {
      const { authorization_url: url, reference } = (await initialize({ amount: '750.25' })).body;
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain(reference);
      expect(findChoice(html, 'pay').form.method).toBe('post');
      expect(findChoice(html, 'cancel').form.method).toBe('post');
    });

    it('should show the amount, the fee and the total the customer pays', async () => {
      // Fee: 1.5 % of 750.25 = 11.25375 -> 11.25, + 100.00 = 111.25; total 861.50.
      const { authorization_url: url } = (await initialize({ amount: '750.25' })).body;
      const html = await openCheckout(url);
      expect(html).toContain('750.25');
      expect(html).toContain('111.25');
      expect(html).toContain('861.50');
    });

    it('should be served without signature headers', async () => {
      const { authorization_url: url } = (await initialize()).body;
      const res = await fetch(url);
      expect(res.status).toBe(200);
    });

    it('should redirect with 303 to the callback_url with the reference appended after paying', async () => {
      const reference = uniqueRef('pay');
      const { authorization_url: url } = (
        await initialize({ reference, callback_url: 'https://shop.example/done' })
      ).body;
      const res = await submit(url, await openCheckout(url), 'pay');
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe('https://shop.example/done');
      expect(location.searchParams.get('reference')).toBe(reference);
    });

    it('should keep the callback_url query string and add reference to it', async () => {
      const reference = uniqueRef('pay');
      const { authorization_url: url } = (
        await initialize({ reference, callback_url: 'https://shop.example/done?order=7' })
      ).body;
      const res = await submit(url, await openCheckout(url), 'pay');
      const location = new URL(res.headers.get('location') ?? '');
      expect(location.searchParams.get('order')).toBe('7');
      expect(location.searchParams.get('reference')).toBe(reference);
    });

    it('should settle the payment as success with the chosen payment method', async () => {
      const { authorization_url: url, reference } = (
        await initialize({ callback_url: 'https://shop.example/done' })
      ).body;
      await submit(url, await openCheckout(url), 'pay', { payment_method: 'ussd' });
      const data = (await verify(reference)).body.data;
      expect(data.status).toBe('success');
      expect(data.payment_method).toBe('ussd');
    });

    it('should settle the payment as abandoned when cancelled, redirecting with the reference', async () => {
      const reference = uniqueRef('pay');
      const { authorization_url: url } = (
        await initialize({ reference, callback_url: 'https://shop.example/done' })
      ).body;
      const res = await submit(url, await openCheckout(url), 'cancel');
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location') ?? '').searchParams.get('reference')).toBe(
        reference,
      );
      expect((await verify(reference)).body.data.status).toBe('abandoned');
    });

    it('should answer a page of its own when there is no callback_url', async () => {
      const { authorization_url: url, reference } = (await initialize()).body;
      const res = await submit(url, await openCheckout(url), 'pay');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect((await verify(reference)).body.data.status).toBe('success');
    });

    it('should answer 410 to the page once the checkout was used', async () => {
      const { authorization_url: url } = (await initialize()).body;
      await submit(url, await openCheckout(url), 'pay');
      expect((await fetch(url)).status).toBe(410);
    });

    it('should not accept a second submission and keep the first outcome', async () => {
      const { authorization_url: url, reference } = (await initialize()).body;
      const page = await openCheckout(url);
      await submit(url, page, 'cancel');
      const second = await submit(url, page, 'pay');
      expect(second.status).toBe(410);
      expect((await verify(reference)).body.data.status).toBe('abandoned');
    });

    it('should credit the balance only once when the pay form is posted twice', async () => {
      const { authorization_url: url } = (await initialize({ amount: '10.00' })).body;
      const page = await openCheckout(url);
      const before = await api.balanceMinor();
      await submit(url, page, 'pay');
      await submit(url, page, 'pay');
      expect(await api.balanceMinor()).toBe(before + toMinor(10));
    });

    it('should answer 410 to the page of a payment completed through the control', async () => {
      const { authorization_url: url, reference } = (await initialize()).body;
      await api.complete(reference, 'success');
      expect((await fetch(url)).status).toBe(410);
    });

    it('should reject a submission that is neither pay nor cancel and keep the payment open', async () => {
      const { authorization_url: url, reference } = (await initialize()).body;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'action=steal',
        redirect: 'manual',
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect((await verify(reference)).body.data.status).toBe('processing');
    });

    it('should escape the reference in the page (no HTML injection)', async () => {
      const reference = `"><script>alert(1)</script>${uniqueRef('x')}`;
      const { authorization_url: url } = (await initialize({ reference })).body;
      const html = await openCheckout(url);
      expect(html).not.toContain('<script>alert(1)</script>');
      expect(html).toContain('&lt;script&gt;');
    });

    it('should serve and complete the checkout of a reference with a slash', async () => {
      const reference = `shop/${uniqueRef('order')}`;
      const { authorization_url: url } = (
        await initialize({ reference, callback_url: 'https://shop.example/done' })
      ).body;
      const res = await submit(url, await openCheckout(url), 'pay');
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location') ?? '').searchParams.get('reference')).toBe(
        reference,
      );
      expect((await verify(reference)).body.data.status).toBe('success');
    });

    it('should answer 404 for an unknown checkout', async () => {
      const res = await fetch(`${api.url}/checkout/${uniqueRef('missing')}`);
      expect(res.status).toBe(404);
    });
  });

  describe('checkout expiry', () => {
    it('should expire a payment still processing 30 sandbox minutes after initialization', async () => {
      const { reference } = (await initialize()).body;
      await api.advance(30 * 60 + 1);
      await api.tick();
      expect((await verify(reference)).body.data.status).toBe('expired');
    });

    it('should keep a payment processing just before 30 sandbox minutes', async () => {
      const { reference } = (await initialize()).body;
      await api.advance(29 * 60);
      await api.tick();
      expect((await verify(reference)).body.data.status).toBe('processing');
    });

    it('should answer 410 to the checkout page once expired', async () => {
      const { authorization_url: url } = (await initialize()).body;
      await api.advance(30 * 60 + 1);
      expect((await fetch(url)).status).toBe(410);
    });

    it('should refuse to complete an expired payment', async () => {
      const { reference } = (await initialize()).body;
      await api.advance(30 * 60 + 1);
      const res = await api.control(`payments/${reference}/complete`, { outcome: 'success' });
      expectError(res, 409, 'payment_not_processing');
      expect((await verify(reference)).body.data.status).toBe('expired');
    });

    it('should not expire a payment that was already paid', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'success');
      await api.advance(30 * 60 + 1);
      expect((await verify(reference)).body.data.status).toBe('success');
    });
  });

  describe('GET /merchants/transactions', () => {
    // Four payments with distinct statuses, methods, emails and creation times.
    let refs: { success: string; failed: string; abandoned: string; processing: string };
    let createdAt: Record<string, string>;

    beforeEach(async () => {
      await api.reset();
      refs = {
        success: uniqueRef('s'),
        failed: uniqueRef('f'),
        abandoned: uniqueRef('a'),
        processing: uniqueRef('p'),
      };
      createdAt = {};
      await initialize({ reference: refs.success, email: 'one@example.com', amount: '100.00' });
      await api.complete(refs.success, 'success', 'card');
      await api.advance(3600);
      await initialize({ reference: refs.failed, email: 'two@example.com', amount: '200.00' });
      await api.complete(refs.failed, 'failed', 'ussd');
      await api.advance(3600);
      await initialize({ reference: refs.abandoned, email: 'one@example.com', amount: '300.00' });
      await api.complete(refs.abandoned, 'abandoned', 'bank_transfer');
      await api.advance(3600);
      await initialize({ reference: refs.processing, email: 'two@example.com', amount: '400.00' });
      for (const reference of Object.values(refs)) {
        createdAt[reference] = (await verify(reference)).body.data.created_at;
      }
    });

    const list = listRequest(api, '/merchants/transactions');

    function references(res: ApiResponse): string[] {
      return (res.body.data as Json[]).map((payment) => payment.reference).sort();
    }

    it('should list every payment with total, page and pageSize at the top level', async () => {
      const res = await list('');
      expectSuccess(res);
      expect(res.body.total).toBe(4);
      expect(res.body.page).toBe(1);
      expect(res.body.pageSize).toBe(10);
      expect(references(res)).toEqual(Object.values(refs).sort());
    });

    it('should list newest first', async () => {
      const res = await list('');
      expect((res.body.data as Json[]).map((p) => p.reference)).toEqual([
        refs.processing,
        refs.abandoned,
        refs.failed,
        refs.success,
      ]);
    });

    it('should include the fee and the spec fields in each record', async () => {
      const res = await list('?status=success');
      const [payment] = res.body.data as Json[];
      expect(payment).toMatchObject({
        reference: refs.success,
        status: 'success',
        amount: 100,
        currency: 'NGN',
        customer_email: 'one@example.com',
        payment_method: 'card',
      });
      expect(typeof payment.fee).toBe('number');
      expect(payment.fee).toBeGreaterThanOrEqual(0);
      expect(Number.isInteger(Math.round(payment.fee * 100))).toBe(true);
      expect(typeof payment.transaction_id).toBe('string');
    });

    it.each([
      ['success', 'success'],
      ['failed', 'failed'],
      ['abandoned', 'abandoned'],
      ['processing', 'processing'],
    ] as const)('should filter by status %s', async (status, key) => {
      const res = await list(`?status=${status}`);
      expect(res.body.total).toBe(1);
      expect(references(res)).toEqual([refs[key]]);
    });

    it('should return an empty page for a status no payment has', async () => {
      const res = await list('?status=reversed');
      expectSuccess(res);
      expect(res.body.total).toBe(0);
      expect(res.body.data).toEqual([]);
    });

    it('should filter by payment_method', async () => {
      const res = await list('?payment_method=ussd');
      expect(res.body.total).toBe(1);
      expect(references(res)).toEqual([refs.failed]);
    });

    it('should filter by exact customer_email', async () => {
      const res = await list(`?customer_email=${encodeURIComponent('one@example.com')}`);
      expect(res.body.total).toBe(2);
      expect(references(res)).toEqual([refs.success, refs.abandoned].sort());
    });

    it('should not match a customer_email by substring', async () => {
      const res = await list(`?customer_email=${encodeURIComponent('ne@example.com')}`);
      expect(res.body.total).toBe(0);
    });

    it('should combine filters', async () => {
      const res = await list(
        `?customer_email=${encodeURIComponent('two@example.com')}&status=processing`,
      );
      expect(references(res)).toEqual([refs.processing]);
    });

    it('should include payments created exactly at start_date', async () => {
      const start = createdAt[refs.abandoned] ?? '';
      const res = await list(`?start_date=${encodeURIComponent(start)}`);
      expect(references(res)).toEqual([refs.abandoned, refs.processing].sort());
    });

    it('should include payments created exactly at end_date', async () => {
      const end = createdAt[refs.failed] ?? '';
      const res = await list(`?end_date=${encodeURIComponent(end)}`);
      expect(references(res)).toEqual([refs.success, refs.failed].sort());
    });

    it('should apply start_date and end_date together', async () => {
      const start = createdAt[refs.failed] ?? '';
      const end = createdAt[refs.abandoned] ?? '';
      const res = await list(
        `?start_date=${encodeURIComponent(start)}&end_date=${encodeURIComponent(end)}`,
      );
      expect(res.body.total).toBe(2);
      expect(references(res)).toEqual([refs.failed, refs.abandoned].sort());
    });

    it('should paginate with a total that matches across pages', async () => {
      const first = await list('?page_size=3&page=1');
      const second = await list('?page_size=3&page=2');
      expectTwoPages(first.body, second.body, 4, 3);
      expect(first.body.data).toHaveLength(3);
      expect(second.body.data).toHaveLength(1);
      expect([...references(first), ...references(second)].sort()).toEqual(
        Object.values(refs).sort(),
      );
    });

    it('should return an empty page past the end with the full total', async () => {
      const res = await list('?page=3&page_size=3');
      expectSuccess(res);
      expect(res.body).toMatchObject({ total: 4, page: 3, pageSize: 3, data: [] });
    });

    it('should accept page_size 1 and 100', async () => {
      expect((await list('?page_size=1')).body.data).toHaveLength(1);
      expect((await list('?page_size=100')).body.pageSize).toBe(100);
    });

    itRejectsBadListQuery(list, {
      paging: [
        ['page_size', '0'],
        ['page_size', '101'],
        ['page_size', 'ten'],
        ['page', '0'],
        ['page', '-1'],
        ['page', '1.5'],
      ],
      status: 'pending',
    });

    it('should reject an unknown payment_method with 400 naming payment_method', async () => {
      expectValidation(await list('?payment_method=cash'), ['payment_method']);
    });

    it('should reject a start_date that is not a date with 400 naming start_date', async () => {
      expectValidation(await list('?start_date=yesterday'), ['start_date']);
    });

    it('should reject an end_date before the start_date with 400 naming end_date', async () => {
      const start = createdAt[refs.abandoned] ?? '';
      const end = createdAt[refs.success] ?? '';
      expectValidation(
        await list(`?start_date=${encodeURIComponent(start)}&end_date=${encodeURIComponent(end)}`),
        ['end_date'],
      );
    });

    it('should require signature headers', async () => {
      const res = await api.call('GET', '/merchants/transactions', undefined, { sign: false });
      expectError(res, 401, 'unauthorized');
    });
  });

  describe('merchant balance', () => {
    it('should credit a successful payment net of fees when the merchant bears them', async () => {
      const { reference } = (await initialize({ amount: '1000.00', merchant_bears_fees: true }))
        .body;
      const before = await api.balanceMinor();
      await api.complete(reference, 'success');
      const after = await api.balanceMinor();
      const listed = await api.call('GET', `/merchants/transactions?status=success&page_size=100`);
      const record = (listed.body.data as Json[]).find((p) => p.reference === reference);
      expect(record).toBeDefined();
      expect(after - before).toBe(toMinor(1000) - toMinor(record.fee));
    });

    it('should credit the full amount when the customer bears the fee (the default)', async () => {
      const { reference } = (await initialize({ amount: '1000.00' })).body;
      const before = await api.balanceMinor();
      await api.complete(reference, 'success');
      expect(await api.balanceMinor()).toBe(before + toMinor(1000));
    });

    it.each([
      ['1000.00', 115],
      ['10000.00', 250],
      ['200000.00', 2000],
      ['50.00', 50],
    ])('should charge the documented fee on %s: %d', async (amount, fee) => {
      const { reference } = (await initialize({ amount })).body;
      const listed = await api.call('GET', '/merchants/transactions?page_size=100');
      const record = (listed.body.data as Json[]).find((p) => p.reference === reference);
      expect(record?.fee).toBe(fee);
    });

    it('should not credit a failed payment', async () => {
      const { reference } = (await initialize({ amount: '1000.00' })).body;
      const before = await api.balanceMinor();
      await api.complete(reference, 'failed');
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should not credit an abandoned payment', async () => {
      const { reference } = (await initialize({ amount: '1000.00' })).body;
      const before = await api.balanceMinor();
      await api.complete(reference, 'abandoned');
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should not credit a payment that is only initialized', async () => {
      const before = await api.balanceMinor();
      await initialize({ amount: '1000.00' });
      expect(await api.balanceMinor()).toBe(before);
    });
  });

  describe('charge_success webhook', () => {
    it('should post the spec envelope to the payment webhook_url', async () => {
      const metadata = { order: 'W-1' };
      const { reference } = (
        await initialize({ amount: '321.45', webhook_url: paymentHooks.url, metadata })
      ).body;
      await api.complete(reference, 'success');
      const hook = await paymentHook(reference);
      expect(hook.body).toMatchObject({
        event_type: 'charge_success',
        data: { reference, amount: 321.45, currency: 'NGN', metadata },
      });
      expectWebhookEnvelope(hook.body);
    });

    it('should sign the webhook with the merchant secret over the exact body', async () => {
      const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
      await api.complete(reference, 'success');
      const hook = await paymentHook(reference);
      expect(hook.headers['x-key-id']).toBe('sandbox-key');
      await expectSignedWebhook(hook);
      await expect(
        verifyRequestSignature({
          secret: 'wrong-secret',
          body: hook.raw,
          headers: hook.headers as Record<string, string>,
        }),
      ).rejects.toThrow();
    });

    it('should post to the sandbox default webhookUrl when the payment has none', async () => {
      const { reference } = (await initialize()).body;
      await api.complete(reference, 'success');
      const hook = await defaultHooks.waitFor(webhookWith('reference', reference), {
        tick: api.tick,
      });
      expect(hook.body.event_type).toBe('charge_success');
    });

    it('should not also post to the default webhookUrl when the payment has its own', async () => {
      const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
      await api.complete(reference, 'success');
      await paymentHook(reference);
      expect(defaultHooks.received.some(webhookWith('reference', reference))).toBe(false);
    });

    it('should record the delivery in /__sandbox/webhooks', async () => {
      const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
      await api.complete(reference, 'success');
      await paymentHook(reference);
      const record = (await api.webhooks()).find(webhookWith('reference', reference));
      expect(record).toMatchObject({
        event_type: 'charge_success',
        url: paymentHooks.url,
        delivery: 'delivered',
        response_status: 200,
      });
      expect(typeof record?.event_id).toBe('string');
    });

    it('should stamp the event with the sandbox time, not the real time', async () => {
      await api.advance(86_400);
      const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
      await api.complete(reference, 'success');
      const hook = await paymentHook(reference);
      const sandboxNow = Date.parse((await api.state()).now);
      expect(Math.abs(Date.parse(hook.body.timestamp) - sandboxNow)).toBeLessThan(5_000);
      expect(Math.abs(Number(hook.headers['x-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    });

    it('should give each event a distinct event_id', async () => {
      const a = (await initialize({ webhook_url: paymentHooks.url })).body.reference;
      const b = (await initialize({ webhook_url: paymentHooks.url })).body.reference;
      await api.complete(a, 'success');
      await api.complete(b, 'success');
      const hookA = await paymentHook(a);
      const hookB = await paymentHook(b);
      expect(hookA.body.event_id).not.toBe(hookB.body.event_id);
    });

    it('should record a delivery to an unreachable receiver as failed with an error', async () => {
      const closed = await startWebhookReceiver();
      const url = closed.url;
      await closed.close();
      // Without retries the first failure is final (retries: test/lib/testing/timing-faults.test.ts).
      await withoutRetries(async () => {
        const { reference } = (await initialize({ webhook_url: url })).body;
        await api.complete(reference, 'success');
        await api.tick();
        const record = (await api.webhooks()).find(webhookWith('reference', reference));
        expect(record?.delivery).toBe('failed');
        expect(typeof record?.error).toBe('string');
        expect(record?.response_status).toBeUndefined();
      });
    });

    it('should record a delivery answered with a redirect as failed', async () => {
      paymentHooks.respondWith = 302;
      await api.control('webhooks/retries', { delays_ms: [] });
      try {
        const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
        await api.complete(reference, 'success');
        await paymentHook(reference);
        await api.tick();
        const record = (await api.webhooks()).find(webhookWith('reference', reference));
        expect(record).toMatchObject({ delivery: 'failed', response_status: 302 });
      } finally {
        paymentHooks.respondWith = 200;
        await api.control('webhooks/retries', { delays_ms: DEFAULT_WEBHOOK_RETRY_DELAYS_MS });
      }
    });

    it('should not send charge_success for a failed payment', async () => {
      const { reference } = (await initialize({ webhook_url: paymentHooks.url })).body;
      await api.complete(reference, 'failed');
      await api.tick();
      const records = await api.webhooks();
      expect(
        records.filter(
          (w) => w.event_type === 'charge_success' && w.body?.data?.reference === reference,
        ),
      ).toEqual([]);
      expect(paymentHooks.received.some(webhookWith('reference', reference))).toBe(false);
    });

    it('should send charge_success when paid through the checkout page', async () => {
      const { reference, authorization_url: url } = (
        await initialize({ webhook_url: paymentHooks.url })
      ).body;
      await submit(url, await openCheckout(url), 'pay');
      const hook = await paymentHook(reference);
      expect(hook.body.event_type).toBe('charge_success');
    });
  });
});
