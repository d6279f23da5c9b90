import { describe, expect, it } from 'vitest';
import { signRequest, verifyRequestSignature } from '../../../lib/signing.ts';
import { createSandbox, type SandboxOptions } from '../../../lib/testing/index.ts';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

interface Sent {
  url: string;
  headers: Headers;
  body: string;
}

function setup(options: SandboxOptions = {}) {
  let realNow = T0;
  const sent: Sent[] = [];
  const sandbox = createSandbox({
    now: () => realNow,
    random: () => 0.5,
    webhookUrl: 'https://hooks.test/default',
    fetch: async (input, init) => {
      sent.push({
        url: String(input),
        headers: new Headers(init?.headers),
        body: String(init?.body),
      });
      return new Response('ok');
    },
    ...options,
  });
  async function call(method: string, path: string, body?: unknown, headers = {}) {
    const raw = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const signature = await signRequest({
      keyId: 'sandbox-key',
      secret: 'sandbox-secret',
      body: raw,
      now: () => realNow,
    });
    const response = await sandbox.fetch(
      new Request(`http://sandbox.test${path}`, {
        method,
        headers: {
          ...signature,
          ...(raw ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
        ...(raw ? { body: raw } : {}),
      }),
    );
    return { status: response.status, headers: response.headers, body: await response.json() };
  }
  async function control(path: string, body?: unknown) {
    const response = await sandbox.fetch(
      new Request(`http://sandbox.test/__sandbox${path}`, {
        method: body === undefined && path !== '/reset' ? 'GET' : 'POST',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { status: response.status, body: await response.json() };
  }
  return {
    sandbox,
    call,
    control,
    sent,
    advanceRealTime: (ms: number) => {
      realNow += ms;
    },
  };
}

const transfer = (reference: string, amount: number | string, account = '0123456789') => ({
  customer_name: 'Ada Obi',
  customer_email: 'ada@example.com',
  reference,
  amount,
  currency: 'NGN',
  destination_bank_code: '058',
  destination_bank_account: account,
  destination_bank_name: 'Guaranty Trust Bank',
});

describe('sandbox', () => {
  describe('routing', () => {
    it('should answer 404 not_found on an unknown route', async () => {
      const { call } = setup();
      const res = await call('GET', '/nope');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: 'error', code: 'not_found' });
    });

    it('should answer 405 with Allow on a known path with the wrong method', async () => {
      const { call } = setup();
      const res = await call('DELETE', '/payments/initialize');
      expect(res.status).toBe(405);
      expect(res.body.code).toBe('method_not_allowed');
      expect(res.headers.get('Allow')).toBe('POST');
    });

    it('should route /refunds/count-by-status before /refunds/{ref}', async () => {
      const { call } = setup();
      const res = await call('GET', '/refunds/count-by-status');
      expect(res.body).toEqual({
        status: 'success',
        data: { processing: 0, success: 0, failed: 0 },
      });
    });
  });

  describe('authentication', () => {
    it('should answer 401 unauthorized without headers', async () => {
      const { sandbox } = setup();
      const res = await sandbox.fetch(new Request('http://sandbox.test/merchants/transactions'));
      expect(res.status).toBe(401);
      expect((await res.json()).code).toBe('unauthorized');
    });

    it('should answer 401 unauthorized for an unknown key id', async () => {
      const { call } = setup();
      const res = await call('GET', '/merchants/transactions', undefined, { 'X-Key-Id': 'other' });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    });

    it('should answer 401 invalid_signature when the body changed after signing', async () => {
      const { sandbox } = setup();
      const body = JSON.stringify({ email: 'a@b.co', amount: '10', currency: 'NGN' });
      const headers = await signRequest({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        body,
        now: () => T0,
      });
      const res = await sandbox.fetch(
        new Request('http://sandbox.test/payments/initialize', {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: `${body} `,
        }),
      );
      expect(res.status).toBe(401);
      expect((await res.json()).code).toBe('invalid_signature');
    });

    it('should check freshness against the real clock, not the sandbox clock', async () => {
      const { call, control, advanceRealTime } = setup();
      await control('/clock/advance', { seconds: 86_400 });
      expect((await call('GET', '/merchants/transactions')).status).toBe(200);
      const stale = await signRequest({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        now: () => T0,
      });
      advanceRealTime(301_000);
      const res = await call('GET', '/merchants/transactions', undefined, stale);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_signature');
    });

    it('should accept a repeated signature so a retry reaches the duplicate rule', async () => {
      const { sandbox } = setup();
      const body = JSON.stringify({
        email: 'a@b.co',
        amount: '10',
        currency: 'NGN',
        reference: 'r1',
      });
      const headers = await signRequest({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        body,
        now: () => T0,
      });
      const send = () =>
        sandbox.fetch(
          new Request('http://sandbox.test/payments/initialize', {
            method: 'POST',
            headers: { ...headers, 'Content-Type': 'application/json' },
            body,
          }),
        );
      expect((await send()).status).toBe(200);
      const second = await send();
      expect(second.status).toBe(409);
      expect((await second.json()).code).toBe('duplicate_reference');
    });

    it('should serve GET /banks unsigned, with two banks sharing a code', async () => {
      const { sandbox } = setup();
      const res = await sandbox.fetch(new Request('http://sandbox.test/banks'));
      const body = await res.json();
      expect(res.status).toBe(200);
      const codes = body.data.map((bank: { bank_code: string }) => bank.bank_code);
      expect(new Set(codes).size).toBeLessThan(codes.length);
    });
  });

  describe('errors', () => {
    it('should echo X-Request-Id in the header and the error body', async () => {
      const { call } = setup();
      const res = await call('GET', '/payments/verify/missing', undefined, {
        'X-Request-Id': 'req-42',
      });
      expect(res.headers.get('X-Request-Id')).toBe('req-42');
      expect(res.body).toEqual({
        status: 'error',
        message: 'Payment not found',
        code: 'not_found',
        request_id: 'req-42',
      });
    });

    it('should generate a request id when none is sent', async () => {
      const { call } = setup();
      const res = await call('GET', '/merchants/transactions');
      // The request id rule of the SDK and the gateway: a fresh UUID when none came.
      expect(res.headers.get('X-Request-Id')).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    });

    it('should answer 415 when a body is not JSON', async () => {
      const { call } = setup();
      const res = await call('POST', '/payments/initialize', 'email=a', {
        'Content-Type': 'text/plain',
      });
      expect(res.status).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it('should answer 400 validation_failed on malformed JSON', async () => {
      const { call } = setup();
      const res = await call('POST', '/payments/initialize', '{"email":');
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    });

    it('should list every issue with dot paths', async () => {
      const { call } = setup();
      const res = await call('POST', '/payments/initialize', {
        email: 'nope',
        amount: '10.001',
        metadata: [],
      });
      expect(res.status).toBe(400);
      const paths = res.body.issues.map((issue: { path: string }) => issue.path).sort();
      expect(paths).toEqual(['amount', 'currency', 'email', 'metadata']);
    });

    it('should validate pagination bounds', async () => {
      const { call } = setup();
      const res = await call('GET', '/merchants/transactions?page=0&page_size=101');
      expect(res.status).toBe(400);
      expect(res.body.issues.map((i: { path: string }) => i.path)).toEqual(['page', 'page_size']);
    });
  });

  describe('payments', () => {
    it('should initialize, complete and credit the balance net of the customer-borne fee', async () => {
      const { call, control, sandbox, sent } = setup();
      const init = await call('POST', '/payments/initialize', {
        email: 'ada@example.com',
        amount: '5000.50',
        currency: 'NGN',
        reference: 'pay-1',
        webhook_url: 'https://hooks.test/pay',
        metadata: { order: 7 },
      });
      expect(init.body).toEqual({
        status: 'success',
        authorization_url: 'http://sandbox.test/checkout/pay-1',
        reference: 'pay-1',
      });
      const before = await call('GET', '/payments/verify/pay-1');
      expect(before.body.data).toMatchObject({
        status: 'processing',
        payment_method: null,
        amount: 5000.5,
      });
      const done = await control('/payments/pay-1/complete', { outcome: 'success' });
      expect(done.body.data).toMatchObject({ status: 'success', payment_method: 'card' });
      expect((await control('/state')).body.balance).toBe(1_005_000.5);
      await sandbox.tick();
      expect(sent).toHaveLength(1);
      const event = JSON.parse(sent[0]?.body ?? '');
      expect(sent[0]?.url).toBe('https://hooks.test/pay');
      expect(event).toMatchObject({
        event_type: 'charge_success',
        data: { reference: 'pay-1', amount: 5000.5, currency: 'NGN', metadata: { order: 7 } },
      });
      await verifyRequestSignature({
        secret: 'sandbox-secret',
        body: sent[0]?.body ?? '',
        headers: sent[0]?.headers ?? new Headers(),
        now: () => T0,
      });
      const log = await control('/webhooks');
      expect(log.body.data[0]).toMatchObject({
        event_type: 'charge_success',
        delivery: 'delivered',
        response_status: 200,
      });
    });

    it('should expire an unpaid payment after the 30 minute checkout window', async () => {
      const { call, control } = setup();
      await call('POST', '/payments/initialize', {
        email: 'a@b.co',
        amount: 10,
        currency: 'NGN',
        reference: 'p',
      });
      await control('/clock/advance', { seconds: 30 * 60 - 1 });
      expect((await call('GET', '/payments/verify/p')).body.data.status).toBe('processing');
      await control('/clock/advance', { seconds: 1 });
      expect((await call('GET', '/payments/verify/p')).body.data.status).toBe('expired');
      const late = await control('/payments/p/complete', { outcome: 'success' });
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('payment_not_processing');
    });

    it('should filter and paginate transactions with a total across pages', async () => {
      const { call, control } = setup();
      for (let i = 1; i <= 12; i++) {
        await call('POST', '/payments/initialize', {
          email: `c${i % 2}@b.co`,
          amount: i,
          currency: 'NGN',
          reference: `p${i}`,
        });
        await control('/clock/advance', { seconds: 1 });
      }
      const page2 = await call(
        'GET',
        '/merchants/transactions?customer_email=c0@b.co&page=2&page_size=4',
      );
      expect(page2.body).toMatchObject({ status: 'success', total: 6, page: 2, pageSize: 4 });
      expect(page2.body.data.map((p: { reference: string }) => p.reference)).toEqual(['p4', 'p2']);
      // 1.5 % + 100.00 is capped at the payment itself.
      expect(page2.body.data[0].fee).toBe(4);
    });
  });

  describe('transfers', () => {
    it('should debit amount + fee, and refuse an overdraft with nothing changed', async () => {
      const { call, control } = setup({ openingBalance: '100.00' });
      const ok = await call('POST', '/disbursements/initialize', transfer('t1', 50));
      expect(ok.body.data).toMatchObject({ reference: 't1', status: 'processing', amount: 50 });
      expect((await control('/state')).body.balance).toBe(40);
      const short = await call('POST', '/disbursements/initialize', transfer('t2', 30.01));
      expect(short.status).toBe(409);
      expect(short.body).toMatchObject({
        code: 'insufficient_funds',
        message: 'Insufficient funds',
      });
      expect((await control('/state')).body.balance).toBe(40);
      expect((await call('GET', '/disbursements/verify/t2')).status).toBe(404);
    });

    it('should settle exactly settleAfterSec after creation in sandbox time', async () => {
      const { call, control } = setup();
      await call('POST', '/disbursements/initialize', transfer('t1', 100));
      await control('/clock/advance', { seconds: 4.999 });
      expect((await call('GET', '/disbursements/verify/t1')).body.data.transfer_status).toBe(
        'processing',
      );
      await control('/clock/advance', { seconds: 0.001 });
      const done = await call('GET', '/disbursements/verify/t1');
      expect(done.body.data).toMatchObject({ transfer_status: 'success', fee: 10 });
      expect(done.body.data.updated_at).toBe(new Date(T0 + 5000).toISOString());
    });

    it('should fail, expire and reverse the magic accounts and return the funds', async () => {
      const { call, control, sandbox } = setup();
      await call('POST', '/disbursements/initialize', transfer('fail', 100, '0000000000'));
      await call('POST', '/disbursements/initialize', transfer('expire', 100, '0000000001'));
      await call('POST', '/disbursements/initialize', transfer('reverse', 100, '0000000002'));
      await control('/clock/advance', { seconds: 5 });
      const status = async (ref: string) =>
        (await call('GET', `/disbursements/verify/${ref}`)).body.data.transfer_status;
      expect([await status('fail'), await status('expire'), await status('reverse')]).toEqual([
        'failed',
        'expired',
        'success',
      ]);
      await control('/clock/advance', { seconds: 5 });
      expect(await status('reverse')).toBe('reversed');
      expect((await control('/state')).body.balance).toBe(1_000_000);
      await sandbox.tick();
      const types = (await control('/webhooks')).body.data.map(
        (w: { event_type: string }) => w.event_type,
      );
      expect(types).toEqual([
        'disbursement_failed',
        'disbursement_expired',
        'disbursement_success',
        'disbursement_reversed',
      ]);
    });

    it('should show the flat variants when asked', async () => {
      const { call, control } = setup();
      await control('/faults', { variant: 'flat' });
      const init = await call('POST', '/disbursements/initialize', transfer('t1', 100));
      expect(init.body).toEqual({
        status: 'processing',
        message: expect.any(String),
        reference: 't1',
      });
      const verify = await call('GET', '/disbursements/verify/t1');
      expect(verify.body).toMatchObject({
        status: 'processing',
        reference: 't1',
        completed_at: null,
      });
      expect((await call('GET', '/refunds/count-by-status')).body).toEqual({
        processing: 0,
        success: 0,
        failed: 0,
      });
    });
  });
});
