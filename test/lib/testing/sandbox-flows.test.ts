import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/signing.ts';
import {
  ConnectionDroppedError,
  createSandbox,
  type SandboxOptions,
} from '../../../lib/testing/index.ts';

// 2025-01-30 23:59:50 UTC: ten seconds before February, to cross a calendar month.
const T0 = Date.UTC(2025, 0, 30, 23, 59, 50);

function setup(options: SandboxOptions = {}) {
  const sandbox = createSandbox({ now: () => T0, random: () => 0.5, ...options });
  async function call(method: string, path: string, body?: unknown) {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const signature = await signRequest({
      keyId: 'sandbox-key',
      secret: 'sandbox-secret',
      body: raw,
      now: () => T0,
    });
    const response = await sandbox.fetch(
      new Request(`http://sandbox.test${path}`, {
        method,
        headers: { ...signature, ...(raw ? { 'Content-Type': 'application/json' } : {}) },
        ...(raw ? { body: raw } : {}),
      }),
    );
    return { status: response.status, body: await response.json() };
  }
  async function control(path: string, body?: unknown) {
    const response = await sandbox.fetch(
      new Request(`http://sandbox.test/__sandbox${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { status: response.status, body: await response.json() };
  }
  const advance = (seconds: number) => control('/clock/advance', { seconds });
  return { sandbox, call, control, advance };
}

const mandateBody = {
  customer_name: 'Ada Obi',
  customer_email: 'ada@example.com',
  account_number: '0123456789',
  bank_code: '058',
  start_date: '2025-01-31',
  end_date: '2025-03-31',
  monthly_amount: '100.30',
  monthly_debit_count: 2,
};

async function activeMandate(
  call: ReturnType<typeof setup>['call'],
  advance: ReturnType<typeof setup>['advance'],
) {
  const created = await call('POST', '/direct-debits/mandates', mandateBody);
  const ref: string = created.body.data.mandate_reference;
  await call('POST', `/direct-debits/mandates/${ref}/initiate-activation`);
  const answers = {
    mandate_reference: ref,
    param1: 'otp',
    value1: '123456',
    param2: 'pin',
    value2: '1234',
  };
  await call('POST', `/direct-debits/mandates/${ref}/validate-activation`, answers);
  await advance(10); // 2025-01-31 00:00:00, the start date
  return ref;
}

const debit = (mandate: string, reference: string, amount: number | string) => ({
  mandate_reference: mandate,
  debit_amount: amount,
  narration: 'Subscription',
  customer_email: 'ADA@example.com',
  payment_reference: reference,
});

describe('sandbox direct debits', () => {
  describe('POST /direct-debits/mandates', () => {
    it('should require a start_date after today and 30 days of duration', async () => {
      const { call } = setup();
      const today = await call('POST', '/direct-debits/mandates', {
        ...mandateBody,
        start_date: '2025-01-30',
      });
      expect(today.body.issues).toEqual([{ path: 'start_date', message: expect.any(String) }]);
      const short = await call('POST', '/direct-debits/mandates', {
        ...mandateBody,
        end_date: '2025-03-01',
      });
      expect(short.body.issues).toEqual([{ path: 'end_date', message: expect.any(String) }]);
      const exact = await call('POST', '/direct-debits/mandates', {
        ...mandateBody,
        end_date: '2025-03-02',
      });
      expect(exact.body.data).toMatchObject({ status: 'pending', monthly_amount: 100.3 });
    });
  });

  describe('activation', () => {
    it('should refuse validation before initiation with the spec message', async () => {
      const { call } = setup();
      const ref = (await call('POST', '/direct-debits/mandates', mandateBody)).body.data
        .mandate_reference;
      const res = await call('POST', `/direct-debits/mandates/${ref}/validate-activation`, {
        mandate_reference: ref,
        param1: 'otp',
        value1: '123456',
        param2: 'pin',
        value2: '1234',
      });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        code: 'activation_not_initiated',
        message: 'Mandate activation needs to be initiated first',
      });
    });

    it('should reject a wrong PIN and accept the sandbox answers', async () => {
      const { call } = setup();
      const ref = (await call('POST', '/direct-debits/mandates', mandateBody)).body.data
        .mandate_reference;
      const challenge = await call('POST', `/direct-debits/mandates/${ref}/initiate-activation`);
      expect(challenge.body.data).toMatchObject({ param1: 'otp', param2: 'pin' });
      const answers = {
        mandate_reference: ref,
        param1: 'pin',
        value1: '0000',
        param2: 'otp',
        value2: '123456',
      };
      const wrong = await call(
        'POST',
        `/direct-debits/mandates/${ref}/validate-activation`,
        answers,
      );
      expect(wrong.status).toBe(422);
      expect(wrong.body.code).toBe('invalid_activation_credentials');
      const ok = await call('POST', `/direct-debits/mandates/${ref}/validate-activation`, {
        ...answers,
        value1: '1234',
      });
      expect(ok.body.data).toEqual({ mandate_reference: ref, status: 'active' });
    });
  });

  describe('POST /direct-debits/debit', () => {
    it('should refuse debits on a pending mandate and before the start date', async () => {
      const { call } = setup();
      const ref = (await call('POST', '/direct-debits/mandates', mandateBody)).body.data
        .mandate_reference;
      const pending = await call('POST', '/direct-debits/debit', debit(ref, 'd0', 1));
      expect(pending.body).toMatchObject({
        code: 'mandate_not_active',
        message: 'Mandate is not active or authorized',
      });
      await call('POST', `/direct-debits/mandates/${ref}/initiate-activation`);
      await call('POST', `/direct-debits/mandates/${ref}/validate-activation`, {
        mandate_reference: ref,
        param1: 'otp',
        value1: '123456',
        param2: 'pin',
        value2: '1234',
      });
      const early = await call('POST', '/direct-debits/debit', debit(ref, 'd1', 1));
      expect(early.status).toBe(422);
      expect(early.body.code).toBe('mandate_not_started');
    });

    it('should hold the monthly amount exactly and reset it in the next calendar month', async () => {
      const { call, advance } = setup();
      const ref = await activeMandate(call, advance);
      expect((await call('POST', '/direct-debits/debit', debit(ref, 'd1', '0.10'))).status).toBe(
        200,
      );
      expect((await call('POST', '/direct-debits/debit', debit(ref, 'd2', 100.2))).status).toBe(
        200,
      );
      const over = await call('POST', '/direct-debits/debit', debit(ref, 'd3', '0.01'));
      expect(over.status).toBe(422);
      expect(over.body.code).toBe('monthly_limit_exceeded');
      await advance(86_400); // February
      expect((await call('POST', '/direct-debits/debit', debit(ref, 'd4', '100.30'))).status).toBe(
        200,
      );
    });

    it('should count debits per month and free the amount of failed ones', async () => {
      const { call, advance } = setup();
      const ref = await activeMandate(call, advance);
      await call('POST', '/direct-debits/debit', debit(ref, 'd1', '50.13'));
      await advance(5);
      const failed = await call('GET', '/direct-debits/status/d1');
      expect(failed.body.data.status).toBe('failed');
      await call('POST', '/direct-debits/debit', debit(ref, 'd2', 50));
      await call('POST', '/direct-debits/debit', debit(ref, 'd3', 50));
      const third = await call('POST', '/direct-debits/debit', debit(ref, 'd4', '0.30'));
      expect(third.body.code).toBe('monthly_limit_exceeded');
    });

    it('should settle a debit after 5 s, crediting the balance only on success', async () => {
      const { call, advance, control, sandbox } = setup();
      const ref = await activeMandate(call, advance);
      await call('POST', '/direct-debits/debit', debit(ref, 'ok', '10.00'));
      await call('POST', '/direct-debits/debit', debit(ref, 'ko', '10.13'));
      await advance(5);
      expect((await control('/state')).body.balance).toBe(1_000_010);
      await sandbox.tick();
      const types = (await control('/webhooks')).body.data.map(
        (w: { event_type: string }) => w.event_type,
      );
      expect(types).toEqual(['mandate_activated', 'direct_debit_success', 'direct_debit_failure']);
    });

    it('should refuse debits after the end date and on cancelled mandates', async () => {
      const { call, advance } = setup();
      const ref = await activeMandate(call, advance);
      await advance(60 * 86_400); // 2025-04-01
      expect((await call('POST', '/direct-debits/debit', debit(ref, 'late', 1))).body.code).toBe(
        'mandate_expired',
      );
      await call('PATCH', `/direct-debits/mandates/${ref}/cancel`);
      const cancelled = await call('POST', '/direct-debits/debit', debit(ref, 'x', 1));
      expect(cancelled.body.code).toBe('mandate_not_active');
    });
  });
});

describe('sandbox refunds', () => {
  async function paidPayment(s: ReturnType<typeof setup>, amount: string) {
    await s.call('POST', '/payments/initialize', {
      email: 'a@b.co',
      amount,
      currency: 'NGN',
      reference: 'pay',
    });
    await s.control('/payments/pay/complete', { outcome: 'success' });
  }
  const refund = (reference: string, amount: number | string, extra = {}) => ({
    payment_reference: 'pay',
    refund_reference: reference,
    currency: 'NGN',
    amount,
    ...extra,
  });

  it('should allow 0.10 + 0.20 against 0.30 and refuse one more 0.01', async () => {
    const s = setup();
    await paidPayment(s, '0.30');
    expect((await s.call('POST', '/refunds/initialize', refund('r1', 0.1))).status).toBe(200);
    expect((await s.call('POST', '/refunds/initialize', refund('r2', '0.20'))).status).toBe(200);
    const more = await s.call('POST', '/refunds/initialize', refund('r3', 0.01));
    expect(more.status).toBe(422);
    expect(more.body.code).toBe('refund_exceeds_payment');
    await s.advance(5);
    expect((await s.call('GET', '/payments/verify/pay')).body.data.status).toBe('reversed');
    expect((await s.call('POST', '/refunds/initialize', refund('r4', 0.01))).body.code).toBe(
      'refund_exceeds_payment',
    );
  });

  it('should free the amount of a failed refund', async () => {
    const s = setup();
    await paidPayment(s, '10.00');
    await s.call(
      'POST',
      '/refunds/initialize',
      refund('r1', 10, { account_number: '0000000000', bank_code: '058' }),
    );
    await s.advance(5);
    expect((await s.call('GET', '/refunds/r1')).body.data.refund_status).toBe('failed');
    expect((await s.call('POST', '/refunds/initialize', refund('r2', 10))).status).toBe(200);
  });

  it('should reject a reused reference, another currency and an account without bank code', async () => {
    const s = setup();
    await paidPayment(s, '10.00');
    await s.call('POST', '/refunds/initialize', refund('r1', 1));
    const dup = await s.call('POST', '/refunds/initialize', refund('r1', 1));
    expect(dup.body).toMatchObject({
      code: 'refund_already_exists',
      message: 'Refund already exists',
    });
    const usd = await s.call('POST', '/refunds/initialize', refund('r2', 1, { currency: 'USD' }));
    expect(usd.body.issues).toEqual([{ path: 'currency', message: expect.any(String) }]);
    const noBank = await s.call(
      'POST',
      '/refunds/initialize',
      refund('r3', 1, { account_number: '0123456789' }),
    );
    expect(noBank.body.issues).toEqual([
      { path: 'bank_code', message: 'Required when account_number is given' },
    ]);
  });

  it('should refuse refunds of a payment that did not succeed', async () => {
    const s = setup();
    await s.call('POST', '/payments/initialize', {
      email: 'a@b.co',
      amount: '10',
      currency: 'NGN',
      reference: 'pay',
    });
    const res = await s.call('POST', '/refunds/initialize', refund('r1', 1));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('payment_not_refundable');
  });
});

describe('sandbox checkout page', () => {
  it('should pay once, redirect to the callback, then answer 410', async () => {
    const s = setup();
    await s.call('POST', '/payments/initialize', {
      email: 'a@b.co',
      amount: '10',
      currency: 'NGN',
      reference: 'p<1>',
      callback_url: 'https://shop.test/done?x=1',
    });
    const page = await s.sandbox.fetch(new Request('http://sandbox.test/checkout/p%3C1%3E'));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('p&lt;1&gt;');
    expect(html).not.toContain('p<1>');
    const pay = await s.sandbox.fetch(
      new Request('http://sandbox.test/checkout/p%3C1%3E', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'action=pay&payment_method=ussd',
      }),
    );
    expect(pay.status).toBe(303);
    expect(pay.headers.get('Location')).toBe('https://shop.test/done?x=1&reference=p%3C1%3E');
    expect((await s.call('GET', '/payments/verify/p%3C1%3E')).body.data).toMatchObject({
      status: 'success',
      payment_method: 'ussd',
    });
    const again = await s.sandbox.fetch(new Request('http://sandbox.test/checkout/p%3C1%3E'));
    expect(again.status).toBe(410);
  });
});

describe('sandbox faults', () => {
  it('should answer 503 before processing at error_rate 1', async () => {
    const s = setup();
    await s.control('/faults', { error_rate: 1 });
    const res = await s.call('POST', '/payments/initialize', {
      email: 'a@b.co',
      amount: 1,
      currency: 'NGN',
    });
    expect(res.status).toBe(503);
    expect((await s.control('/state')).body.counts.payments).toBe(0);
  });

  it('should commit and then drop the connection at drop_rate 1', async () => {
    const s = setup();
    await s.control('/faults', { drop_rate: 1 });
    await expect(
      s.call('POST', '/payments/initialize', {
        email: 'a@b.co',
        amount: 1,
        currency: 'NGN',
        reference: 'd',
      }),
    ).rejects.toBeInstanceOf(ConnectionDroppedError);
    await s.control('/faults', {});
    expect((await s.call('GET', '/payments/verify/d')).body.data.reference).toBe('d');
  });
});

describe('sandbox webhooks', () => {
  it('should log no_target without a webhook address and failed on an error answer', async () => {
    const s = setup();
    const failing = setup({
      webhookUrl: 'https://hooks.test/x',
      fetch: async () => new Response('no', { status: 500 }),
    });
    // Without retries the first failure is final (retries: test/lib/testing/timing-faults.test.ts).
    await failing.control('/webhooks/retries', { delays_ms: [] });
    for (const t of [s, failing]) {
      await t.call('POST', '/virtual-accounts', {
        account_reference: 'va1',
        customer_name: 'Ada Obi',
        customer_email: 'ada@example.com',
        currency_code: 'NGN',
        bvn: '12345678901',
      });
      await t.control('/virtual-accounts/va1/credit', { amount: '2500.75' });
      await t.sandbox.tick();
    }
    expect((await s.control('/webhooks')).body.data[0]).toMatchObject({
      event_type: 'virtual_account_credit',
      url: null,
      delivery: 'no_target',
    });
    expect((await failing.control('/webhooks')).body.data[0]).toMatchObject({
      delivery: 'failed',
      response_status: 500,
    });
    const list = await s.call(
      'GET',
      '/merchants/virtual-accounts/transactions?account_reference=va1',
    );
    expect(list.body).toMatchObject({
      total: 1,
      page: 1,
      pageSize: 10,
      data: [{ amount: 2500.75 }],
    });
    expect((await s.control('/state')).body.balance).toBe(1_002_500.75);
  });
});
