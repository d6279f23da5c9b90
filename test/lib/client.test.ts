import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AbortError,
  ConnectionError,
  DuplicateRefundError,
  InsufficientFundsError,
  MandateNotActiveError,
  NotFoundError,
  PaymentsClient,
  PaymentsError,
  type RequestEvent,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
} from '../../lib/index.ts';
import {
  isoDate,
  type SandboxClient,
  startSandboxClient,
  uniqueRef,
} from '../support/sandbox-client.ts';

let sandbox: SandboxClient;
let requests: RequestEvent[];

function client(extra: Partial<ConstructorParameters<typeof PaymentsClient>[0]> = {}) {
  return new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: sandbox.url,
    onRequest: (event) => requests.push(event),
    random: () => 0,
    ...extra,
  });
}

const transferParams = (reference: string, amount: number | string = 5000) => ({
  reference,
  amount,
  currency: 'NGN',
  customer_name: 'Grace Hopper',
  customer_email: 'grace@example.com',
  destination_bank_code: '058',
  destination_bank_account: '0123456789',
  destination_bank_name: 'GTBank',
});

beforeAll(async () => {
  sandbox = await startSandboxClient();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  requests = [];
  await sandbox.control('faults', {});
});

describe('PaymentsClient', () => {
  describe('constructor', () => {
    it('should require credentials and an address', () => {
      expect(() => new PaymentsClient({ baseUrl: 'http://x' })).toThrow(/keyId and secret/);
      expect(() => new PaymentsClient({ keyId: 'k', secret: 's' })).toThrow(/baseUrl/);
    });

    it.each([
      ['undefined', undefined],
      ['null', null],
      ['empty', ''],
    ])('should refuse to sign with a secret that is %s, naming `secret`', (_, missing) => {
      expect(
        () => new PaymentsClient({ keyId: 'k', secret: missing as string, baseUrl: 'http://x' }),
      ).toThrow(new TypeError('`secret` is missing or empty'));
    });
  });

  describe('payments', () => {
    it('should initialize with a generated reference, complete, verify and list', async () => {
      const sdk = client();
      const session = await sdk.payments.initialize({
        email: 'ada@example.com',
        amount: '2500.50',
        currency: 'NGN',
      });
      expect(session.reference).toMatch(/^pay_[0-9a-f-]{36}$/);
      expect(session.authorization_url).toBe(`${sandbox.url}/checkout/${session.reference}`);
      expect((await sdk.payments.verify(session.reference)).status).toBe('processing');
      await sandbox.complete(session.reference, 'success');
      const payment = await sdk.payments.verify(session.reference);
      expect(payment).toMatchObject({
        reference: session.reference,
        status: 'success',
        amount: 2500.5,
        currency: 'NGN',
      });
      const listed = await sdk.payments
        .list({ customer_email: 'ada@example.com', page_size: 1 })
        .toArray({ limit: 5 });
      expect(listed.map((p) => p.reference)).toContain(session.reference);
    });

    it('should give the flat verify variant the same shape', async () => {
      const sdk = client();
      const session = await sdk.payments.initialize({
        email: 'flat@example.com',
        amount: 100,
        currency: 'NGN',
      });
      const enveloped = await sdk.payments.verify(session.reference);
      await sandbox.control('faults', { variant: 'flat' });
      const flat = await sdk.payments.verify(session.reference);
      expect(flat.reference).toBe(enveloped.reference);
      expect(flat.status).toBe(enveloped.status);
      expect(flat.transaction_id).toBe(enveloped.transaction_id);
    });
  });

  describe('transfers', () => {
    it('should validate before any network call', async () => {
      const sdk = client();
      const error = await sdk.transfers
        .initialize({ ...transferParams(''), amount: -1, currency: 'naira' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues.map((issue) => issue.path).sort()).toEqual([
        'amount',
        'currency',
        'reference',
      ]);
      expect(requests).toEqual([]);
    });

    it('should send, settle and wait for the final state', async () => {
      const sdk = client();
      const reference = uniqueRef('tr');
      const sent = await sdk.transfers.initialize({
        ...transferParams(reference),
        narration: 'Invoice 1',
      });
      expect(sent).toMatchObject({
        reference,
        status: 'processing',
        amount: 5000,
        currency: 'NGN',
        narration: 'Invoice 1',
      });
      const verified = await sdk.transfers.verify(reference);
      expect(verified).toMatchObject({ status: 'processing', fee: 10 });
      expect(verified).not.toHaveProperty('transfer_status');
      await sandbox.advance(6);
      const final = await sdk.transfers.waitForFinal(reference, {
        intervalMs: 10,
        timeoutMs: 2_000,
      });
      expect(final.status).toBe('success');
    });

    it('should give the flat initialize and verify variants the same shape', async () => {
      const sdk = client();
      await sandbox.control('faults', { variant: 'flat' });
      const reference = uniqueRef('tr-flat');
      const sent = await sdk.transfers.initialize(transferParams(reference, '1234.56'));
      expect(sent).toMatchObject({
        reference,
        status: 'processing',
        amount: 1234.56,
        destination_bank_account: '0123456789',
      });
      const verified = await sdk.transfers.verify(reference);
      expect(verified).toMatchObject({ reference, status: 'processing', amount: 1234.56 });
    });

    it('should raise InsufficientFundsError for a transfer beyond the balance', async () => {
      const error = await client()
        .transfers.initialize(transferParams(uniqueRef('big'), '999999999.00'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InsufficientFundsError);
      expect((error as InsufficientFundsError).status).toBe(409);
      expect((error as InsufficientFundsError).message).toContain('POST');
      expect((error as InsufficientFundsError).requestId).toBe(requests[0]?.requestId);
    });

    it('should list across pages with for await', async () => {
      const sdk = client();
      const email = `${uniqueRef('pages')}@example.com`;
      for (let i = 0; i < 3; i++) {
        await sdk.transfers.initialize({
          ...transferParams(uniqueRef('tr-page')),
          customer_email: email,
          amount: 10,
        });
      }
      const seen: string[] = [];
      for await (const transfer of sdk.transfers.list({ customer_email: email, page_size: 2 }))
        seen.push(transfer.reference);
      expect(seen).toHaveLength(3);
      const page = await sdk.transfers.list({ customer_email: email, page_size: 2 }).page(2);
      expect(page).toMatchObject({ total: 3, page: 2, pageSize: 2 });
      expect(page.items).toHaveLength(1);
    });

    it('should create a transfer exactly once when the first answer is lost after the commit', async () => {
      const reference = uniqueRef('lost');
      let dropped = false;
      // The sandbox commits the transfer; the connection then fails before the caller reads it.
      const lossy: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (!dropped && String(input).endsWith('/disbursements/initialize')) {
          dropped = true;
          await response.arrayBuffer();
          throw new TypeError('fetch failed: connection reset');
        }
        return response;
      };
      const before = (await sandbox.state()).balance;
      const transfer = await client({ fetch: lossy }).transfers.initialize(
        transferParams(reference, 100),
      );
      expect(transfer).toMatchObject({ reference, status: 'processing', amount: 100 });
      expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual([
        'POST /disbursements/initialize',
        `GET /disbursements/verify/${reference}`,
      ]);
      expect(before - (await sandbox.state()).balance).toBe(110);
    });

    it('should create a transfer exactly once when the sandbox drops the connection after committing', async () => {
      await sandbox.control('faults', { drop_rate: 1 });
      const reference = uniqueRef('dropped');
      const before = (await sandbox.state()).balance;
      const sdk = client({
        // The response is lost on the wire; clear the fault so the lookup gets through.
        onResponse: (event) => {
          if (event.status === undefined) void sandbox.control('faults', {});
        },
      });
      const transfer = await sdk.transfers.initialize(transferParams(reference, 100));
      expect(transfer).toMatchObject({ reference, status: 'processing', fee: 10 });
      expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual([
        'POST /disbursements/initialize',
        `GET /disbursements/verify/${reference}`,
      ]);
      const listed = await sdk.transfers
        .list({ customer_email: 'grace@example.com', page_size: 100 })
        .toArray({ limit: 1000 });
      expect(listed.filter((t) => t.reference === reference)).toHaveLength(1);
      expect(before - (await sandbox.state()).balance).toBe(110);
    });

    it("should not take another request's record with the same reference as its outcome", async () => {
      const reference = uniqueRef('taken');
      await client().transfers.initialize(transferParams(reference, 500));
      requests.length = 0;
      // This request's POST is lost on the wire before it lands; the lookup finds the 500.
      const lost: typeof fetch = (input, init) =>
        init?.method === 'POST'
          ? Promise.reject(new TypeError('fetch failed: connection reset'))
          : fetch(input, init);
      const error = await client({ fetch: lost })
        .transfers.initialize(transferParams(reference, 7.25))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PaymentsError);
      expect((error as Error).message).toMatch(/exists with another amount; not resent/);
      // Looked up, never resent: the 7.25 transfer does not go out under a taken reference.
      expect(requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual([
        'POST /disbursements/initialize',
        `GET /disbursements/verify/${reference}`,
      ]);
    });

    it('should time out a body that stalls after the headers', async () => {
      // The real sandbox answer, whose body then never finishes arriving.
      const stalling: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        const first = new Uint8Array(await response.arrayBuffer()).slice(0, 5);
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(first);
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      };
      const error = await client({ fetch: stalling, timeoutMs: 100, maxRetries: 0 })
        .banks.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).timeoutMs).toBe(100);
    });

    it('should resend after a lost answer when the first attempt never landed', async () => {
      await sandbox.control('faults', { error_rate: 1 });
      const reference = uniqueRef('retry');
      const sdk = client({
        settleMs: 600,
        onResponse: () => {
          void sandbox.control('faults', {});
        },
      });
      const transfer = await sdk.transfers.initialize(transferParams(reference, 100));
      expect(transfer.reference).toBe(reference);
      const paths = requests.map((r) => `${r.method} ${new URL(r.url).pathname}`);
      // Looked up through the settle window (at least twice: at once and at its end), then resent.
      expect(paths.at(0)).toBe('POST /disbursements/initialize');
      expect(paths.at(-1)).toBe('POST /disbursements/initialize');
      expect(paths.slice(1, -1).length).toBeGreaterThanOrEqual(2);
      expect(new Set(paths.slice(1, -1))).toEqual(
        new Set([`GET /disbursements/verify/${reference}`]),
      );
    });

    it('should time out a slow answer and retry it', async () => {
      await sandbox.control('faults', { latency_ms: 300 });
      const error = await client({ timeoutMs: 50, maxRetries: 1 })
        .transfers.verify('whatever')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(requests.map((r) => r.attempt)).toEqual([1, 2]);
    });

    it('should verify before resending a POST whose fetch ignored the timeout', async () => {
      const reference = uniqueRef('stalled');
      // The first POST never settles and ignores its signal; everything else reaches the sandbox.
      let stalled = false;
      const stalling: typeof fetch = (input, init) => {
        if (stalled || init?.method !== 'POST') return fetch(input, init);
        stalled = true;
        return new Promise<never>(() => {});
      };
      const transfer = await client({
        fetch: stalling,
        timeoutMs: 50,
        settleMs: 400,
      }).transfers.initialize(transferParams(reference, 100));
      expect(transfer).toMatchObject({ reference, status: 'processing', amount: 100 });
      const paths = requests.map((r) => `${r.method} ${new URL(r.url).pathname}`);
      expect(paths.filter((path) => path.startsWith('POST'))).toHaveLength(2);
      expect(paths.at(-1)).toBe('POST /disbursements/initialize');
      expect(paths.slice(1, -1)).toContain(`GET /disbursements/verify/${reference}`);
    });

    it('should hold the whole call to deadlineMs, retries and waits included', async () => {
      await sandbox.control('faults', { latency_ms: 300 });
      const started = Date.now();
      const error = await client({ timeoutMs: 5_000, deadlineMs: 150, maxRetries: 5 })
        .transfers.verify('whatever')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      // The attempt's timeout is what was left of the budget when it started.
      expect((error as TimeoutError).timeoutMs).toBeGreaterThan(100);
      expect((error as TimeoutError).timeoutMs).toBeLessThanOrEqual(150);
      // The budget was spent on the first attempt: no retry could fit in it.
      expect(requests.map((r) => r.attempt)).toEqual([1]);
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('should sign every attempt afresh', async () => {
      await sandbox.control('faults', { error_rate: 1 });
      const signatures: string[] = [];
      const sdk = client({
        maxRetries: 1,
        now: (() => {
          let tick = Date.now();
          return () => (tick += 1_000);
        })(),
        fetch: (input, init) => {
          signatures.push(new Headers(init?.headers).get('x-timestamp') ?? '');
          return fetch(input, init);
        },
      });
      await sdk.transfers.verify('whatever').catch(() => undefined);
      expect(signatures).toHaveLength(2);
      expect(new Set(signatures).size).toBe(2);
    });

    it('should stop at once when the caller aborts', async () => {
      await sandbox.control('faults', { latency_ms: 300 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user left')), 30);
      const error = await client()
        .transfers.verify('whatever', { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect(requests).toHaveLength(1);
    });

    it('should surface a ConnectionError when nothing listens', async () => {
      const error = await new PaymentsClient({
        keyId: 'k',
        secret: 's',
        baseUrl: 'http://127.0.0.1:9',
        maxRetries: 0,
      }).transfers
        .verify('x')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
    });

    it('should raise NotFoundError for an unknown reference', async () => {
      await expect(client().transfers.verify(uniqueRef('none'))).rejects.toBeInstanceOf(
        NotFoundError,
      );
    });
  });

  describe('refunds', () => {
    it('should refund, retrieve, list and count in both variants', async () => {
      const sdk = client();
      const session = await sdk.payments.initialize({
        email: 'rf@example.com',
        amount: '0.30',
        currency: 'NGN',
      });
      await sandbox.complete(session.reference, 'success');
      const refundReference = uniqueRef('rf');
      const refund = await sdk.refunds.initialize({
        payment_reference: session.reference,
        refund_reference: refundReference,
        currency: 'NGN',
        amount: '0.10',
      });
      expect(refund).toMatchObject({
        refund_reference: refundReference,
        status: 'processing',
        amount: 0.1,
      });
      await expect(
        sdk.refunds.initialize({
          payment_reference: session.reference,
          refund_reference: refundReference,
          currency: 'NGN',
          amount: '0.10',
        }),
      ).rejects.toBeInstanceOf(DuplicateRefundError);
      const retrieved = await sdk.refunds.retrieve(refundReference);
      expect(retrieved.status).toBe('processing');
      expect(
        (await sdk.refunds.listForPayment(session.reference)).map((r) => r.refund_reference),
      ).toEqual([refundReference]);
      const listed = await sdk.refunds
        .list({ payment_reference: session.reference })
        .toArray({ limit: 10 });
      expect(listed.map((r) => r.status)).toEqual(['processing']);
      const counts = await sdk.refunds.countByStatus();
      await sandbox.control('faults', { variant: 'flat' });
      expect(await sdk.refunds.countByStatus()).toEqual(counts);
      expect(await sdk.refunds.retrieve(refundReference)).toStrictEqual(retrieved);
      await sandbox.control('faults', {});
      await sandbox.advance(6);
      expect((await sdk.refunds.waitForFinal(refundReference, { intervalMs: 10 })).status).toBe(
        'success',
      );
    });
  });

  describe('banks', () => {
    it('should list banks unsigned and resolve an account', async () => {
      const sdk = client();
      const banks = await sdk.banks.list();
      expect(banks.length).toBeGreaterThan(5);
      const resolved = await sdk.banks.resolve({
        bank: '058',
        account: '0123456789',
        currency: 'NGN',
      });
      expect(resolved).toMatchObject({ bank_code: '058', account_number: '0123456789' });
      await expect(
        sdk.banks.resolve({ bank: '058', account: '0000000000', currency: 'NGN' }),
      ).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('directDebits', () => {
    it('should walk a mandate from creation to a settled debit', async () => {
      const sdk = client();
      const state = await sandbox.state();
      const mandate = await sdk.directDebits.createMandate({
        customer_name: 'Ada Lovelace',
        customer_email: 'ada@example.com',
        account_number: '0123456789',
        bank_code: '058',
        start_date: isoDate(state.now, 1),
        end_date: isoDate(state.now, 60),
        monthly_amount: 50000,
        monthly_debit_count: 4,
      });
      expect(mandate.status).toBe('pending');
      const debit = {
        mandate_reference: mandate.mandate_reference,
        debit_amount: 1000,
        narration: 'Subscription',
        customer_email: 'ada@example.com',
        payment_reference: uniqueRef('dd'),
      };
      await expect(sdk.directDebits.debit(debit)).rejects.toBeInstanceOf(MandateNotActiveError);
      const challenge = await sdk.directDebits.initiateActivation(mandate.mandate_reference);
      const active = await sdk.directDebits.validateActivation(mandate.mandate_reference, {
        param1: challenge.param1,
        value1: '123456',
        param2: challenge.param2,
        value2: '1234',
      });
      expect(active.status).toBe('active');
      await sandbox.advance(86_400);
      expect((await sdk.directDebits.debit(debit)).status).toBe('processing');
      await sandbox.advance(6);
      expect(
        (await sdk.directDebits.waitForFinal(debit.payment_reference, { intervalMs: 10 })).status,
      ).toBe('success');
      expect((await sdk.directDebits.cancelMandate(mandate.mandate_reference)).status).toBe(
        'cancelled',
      );
      expect((await sdk.directDebits.retrieveMandate(mandate.mandate_reference)).status).toBe(
        'cancelled',
      );
    });
  });

  describe('directDebits.disburse', () => {
    it('should validate the known fields and send the others on as given', async () => {
      const sdk = client();
      const reference = uniqueRef('dd-out');
      const {
        customer_name: _n,
        customer_email: _e,
        ...params
      } = transferParams(reference, '250.00');
      const transfer = await sdk.directDebits.disburse({ ...params, settlement_batch: 'B-7' });
      expect(transfer).toMatchObject({ reference, status: 'processing', amount: 250 });
      const requestId = requests.at(-1)?.requestId;
      const log = await sandbox.control(`requests?request_id=${requestId}`);
      expect(JSON.parse(log.body.data[0].body)).toEqual({ ...params, settlement_batch: 'B-7' });
      const error = await sdk.directDebits
        .disburse({ reference: uniqueRef('dd-out'), amount: '-1', settlement_batch: 7 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual([
        'amount',
      ]);
    });
  });

  describe('virtualAccounts', () => {
    it('should create, retrieve, find by email and list inflows', async () => {
      const sdk = client();
      const accountReference = uniqueRef('va');
      const email = `${accountReference}@example.com`;
      const account = await sdk.virtualAccounts.create({
        account_reference: accountReference,
        customer_name: 'Ada Lovelace',
        customer_email: email,
        currency_code: 'NGN',
        bvn: '12345678901',
      });
      expect(account).toMatchObject({
        account_reference: accountReference,
        currency_code: 'NGN',
        account_status: 'active',
      });
      expect(account).not.toHaveProperty('status');
      expect(account).not.toHaveProperty('bvn');
      expect((await sdk.virtualAccounts.retrieve(accountReference)).account_number).toBe(
        account.account_number,
      );
      expect((await sdk.virtualAccounts.retrieveByEmail(email)).account_reference).toBe(
        accountReference,
      );
      await sandbox.control(`virtual-accounts/${accountReference}/credit`, {
        amount: '1500.25',
      });
      const inflows = await sdk.virtualAccounts
        .listTransactions({ account_reference: accountReference })
        .toArray({ limit: 5 });
      expect(inflows.map((t) => t.amount)).toEqual([1500.25]);
    });
  });

  describe('response validation', () => {
    it('should give a transfer the same fields in verify and in a list', async () => {
      const sdk = client();
      const reference = uniqueRef('tr-keep');
      const email = `${reference}@example.com`;
      await sdk.transfers.initialize({ ...transferParams(reference), customer_email: email });
      // The wire names the state `transfer_status`: it is moved to `status`, the one name.
      const verified = await sdk.transfers.verify(reference);
      expect(verified).toMatchObject({ status: 'processing', customer_email: email });
      expect(verified).not.toHaveProperty('transfer_status');
      const [listed] = await sdk.transfers.list({ customer_email: email }).toArray({ limit: 1 });
      expect(listed).toEqual(verified);
    });

    it('should raise ResponseValidationError with the raw body for a wrong shape', async () => {
      // A real sandbox answer that is not a transfer: its state, served for every call.
      const sdk = client({ fetch: () => fetch(`${sandbox.url}/__sandbox/state`) });
      const error = await sdk.transfers.verify('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResponseValidationError);
      expect((error as ResponseValidationError).rawBody).toContain('"balance"');
      expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toContain(
        'reference',
      );
    });
  });
});
