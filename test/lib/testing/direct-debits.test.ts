/**
 * Contract tests of the sandbox emulator's direct debits over real HTTP (docs/payments-api.md,
 * "Endpoints > Direct debit", "States > Mandate", "States > Direct debit transaction", "Limits";
 * docs/sandbox.md: magic values, two clocks, calendar months in UTC).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  expectError,
  expectIsoTimestamp,
  expectSignedWebhook,
  expectSuccess,
  expectTimestamps,
  expectValidation,
} from '../../support/expect-api.ts';
import { mandateBody } from '../../support/payloads.ts';
import {
  type ApiResponse,
  isoDate,
  type Json,
  toMinor,
  uniqueRef,
} from '../../support/sandbox-client.ts';
import { useSandboxClient, useWebhookReceiver } from '../../support/sandbox-fixture.ts';
import { webhookWith } from '../../support/webhook-receiver.ts';

const DAY = 86_400;
const NOT_ACTIVE = 'Mandate is not active or authorized';
const NOT_INITIATED = 'Mandate activation needs to be initiated first';

const hooks = useWebhookReceiver();
const api = useSandboxClient(() => ({ webhookUrl: hooks.url }));
/** Sandbox date (UTC) at the start of each test. */
let today: string;

beforeEach(async () => {
  await api.reset();
  today = isoDate((await api.state()).now);
});

/** `POST /direct-debits/mandates` for a mandate from `startDate` to `endDate` (YYYY-MM-DD). */
function createMandateBetween(
  startDate: string,
  endDate: string,
  overrides: Record<string, unknown> = {},
): Promise<ApiResponse> {
  return api.call('POST', '/direct-debits/mandates', mandateBody(startDate, endDate, overrides));
}

/** Creates a mandate running from tomorrow to 365 days from now (sandbox dates). */
async function createMandate(overrides: Record<string, unknown> = {}): Promise<ApiResponse> {
  const current = isoDate((await api.state()).now);
  return createMandateBetween(isoDate(current, 1), isoDate(current, 365), overrides);
}

async function pendingMandate(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await createMandate(overrides);
  expectSuccess(res);
  return res.body.data.mandate_reference;
}

async function initiate(reference: string): Promise<ApiResponse> {
  return api.call(
    'POST',
    `/direct-debits/mandates/${encodeURIComponent(reference)}/initiate-activation`,
  );
}

/** The customer's answers: the sandbox's OTP 123456 and PIN 1234, matched by parameter name. */
function answer(param: string, wrong: 'otp' | 'pin' | null = null): string {
  if (/otp/i.test(param)) return wrong === 'otp' ? '654321' : '123456';
  if (/pin/i.test(param)) return wrong === 'pin' ? '9999' : '1234';
  throw new Error(`unexpected activation parameter ${param}`);
}

/** `POST .../validate-activation` of mandate `reference` with exactly `body`. */
function sendActivation(reference: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return api.call(
    'POST',
    `/direct-debits/mandates/${encodeURIComponent(reference)}/validate-activation`,
    body,
  );
}

/** Answers `challenge` for mandate `reference`, with a wrong OTP or PIN when asked. */
async function validateActivation(
  reference: string,
  challenge: Json,
  wrong: 'otp' | 'pin' | null = null,
): Promise<ApiResponse> {
  return sendActivation(reference, {
    mandate_reference: reference,
    param1: challenge.param1,
    value1: answer(challenge.param1, wrong),
    param2: challenge.param2,
    value2: answer(challenge.param2, wrong),
  });
}

async function activeMandate(overrides: Record<string, unknown> = {}): Promise<string> {
  const reference = await pendingMandate(overrides);
  const challenge = await initiate(reference);
  expectSuccess(challenge);
  expectSuccess(await validateActivation(reference, challenge.body.data));
  return reference;
}

/** An active mandate with the sandbox clock moved to its start_date (tomorrow), so it can be debited. */
async function debitableMandate(overrides: Record<string, unknown> = {}): Promise<string> {
  const mandate = await activeMandate(overrides);
  await advanceDays(1);
  return mandate;
}

async function getMandate(reference: string): Promise<ApiResponse> {
  return api.call('GET', `/direct-debits/mandates/${encodeURIComponent(reference)}`);
}

async function cancel(reference: string): Promise<ApiResponse> {
  return api.call('PATCH', `/direct-debits/mandates/${encodeURIComponent(reference)}/cancel`);
}

async function debit(
  mandateReference: string,
  overrides: Record<string, unknown> = {},
): Promise<ApiResponse> {
  return api.call('POST', '/direct-debits/debit', {
    mandate_reference: mandateReference,
    debit_amount: 100,
    narration: 'Subscription',
    customer_email: 'ada@example.com',
    payment_reference: uniqueRef('dd'),
    ...overrides,
  });
}

async function debitStatus(paymentReference: string): Promise<ApiResponse> {
  return api.call('GET', `/direct-debits/status/${encodeURIComponent(paymentReference)}`);
}

/** Advances the sandbox clock by whole days. */
async function advanceDays(days: number): Promise<void> {
  await api.advance(days * DAY);
}

/** Days from the current sandbox date to the 1st of the next calendar month (UTC). */
async function daysToNextMonth(): Promise<number> {
  const now = new Date((await api.state()).now);
  const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const todayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Math.round((first - todayStart) / (DAY * 1000));
}

/** Days left in the current sandbox month after today (0 on its last day). */
async function daysLeftInMonth(): Promise<number> {
  return (await daysToNextMonth()) - 1;
}

describe('sandbox direct debits', () => {
  describe('POST /direct-debits/mandates', () => {
    it('should create a pending mandate echoing every field', async () => {
      const start = isoDate(today, 1);
      const end = isoDate(today, 31);
      const res = await createMandateBetween(start, end);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({
        status: 'pending',
        customer_name: 'Ada Obi',
        customer_email: 'ada@example.com',
        account_number: '0123456789',
        bank_code: '058',
        start_date: start,
        end_date: end,
        monthly_amount: 10000,
        monthly_debit_count: 3,
      });
      expect(typeof res.body.data.mandate_reference).toBe('string');
      expectIsoTimestamp(res.body.data.created_at);
    });

    it('should accept monthly_amount as a decimal string and return a number', async () => {
      const res = await createMandate({ monthly_amount: '2500.50' });
      expectSuccess(res);
      expect(res.body.data.monthly_amount).toBe(2500.5);
    });

    it('should give every mandate a distinct reference', async () => {
      expect(await pendingMandate()).not.toBe(await pendingMandate());
    });

    it('should reject a start_date of today (sandbox date) with an issue at start_date', async () => {
      const res = await createMandateBetween(today, isoDate(today, 60));
      expectValidation(res, ['start_date']);
    });

    it('should reject a start_date in the past with an issue at start_date', async () => {
      const res = await createMandateBetween(isoDate(today, -3), isoDate(today, 60));
      expectValidation(res, ['start_date']);
    });

    it('should judge "future" by the sandbox clock, not the real one', async () => {
      await advanceDays(10);
      const res = await createMandateBetween(isoDate(today, 5), isoDate(today, 60));
      expectValidation(res, ['start_date']);
    });

    it('should reject an end_date 29 days after start_date with an issue at end_date', async () => {
      const start = isoDate(today, 1);
      const res = await createMandateBetween(start, isoDate(start, 29));
      expectValidation(res, ['end_date']);
    });

    it('should accept an end_date exactly 30 days after start_date', async () => {
      const start = isoDate(today, 1);
      const res = await createMandateBetween(start, isoDate(start, 30));
      expectSuccess(res);
    });

    it('should list every missing field as an issue', async () => {
      const res = await api.call('POST', '/direct-debits/mandates', {});
      expectValidation(res, [
        'customer_name',
        'customer_email',
        'account_number',
        'bank_code',
        'start_date',
        'end_date',
        'monthly_amount',
        'monthly_debit_count',
      ]);
    });

    it.each([
      ['an impossible start_date', { start_date: '2031-02-30' }, 'start_date'],
      ['a start_date not written YYYY-MM-DD', { start_date: '01/02/2031' }, 'start_date'],
      ['a fractional monthly_debit_count', { monthly_debit_count: 1.5 }, 'monthly_debit_count'],
      ['a zero monthly_debit_count', { monthly_debit_count: 0 }, 'monthly_debit_count'],
      ['a zero monthly_amount', { monthly_amount: 0 }, 'monthly_amount'],
      ['a monthly_amount with 3 decimals', { monthly_amount: 1.005 }, 'monthly_amount'],
    ])('should reject %s', async (_label, overrides, path) => {
      expectValidation(await createMandate(overrides), [path]);
    });
  });

  describe('GET /direct-debits/mandates/{mandate_reference}', () => {
    it('should return the mandate with created_at and updated_at', async () => {
      const reference = await pendingMandate({ monthly_amount: 2500.5 });
      const res = await getMandate(reference);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        mandate_reference: reference,
        status: 'pending',
        monthly_amount: 2500.5,
      });
      expectTimestamps(res.body.data);
    });

    it('should answer 404 not_found for an unknown mandate', async () => {
      expectError(await getMandate(uniqueRef('md')), 404, 'not_found');
    });
  });

  describe('activation', () => {
    it('should answer a challenge naming two parameters with prompts', async () => {
      const reference = await pendingMandate();
      const res = await initiate(reference);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      const data = res.body.data;
      expect(data.mandate_reference).toBe(reference);
      for (const key of ['param1', 'param2', 'value1', 'value2']) {
        expect(typeof data[key]).toBe('string');
        expect(data[key].length).toBeGreaterThan(0);
      }
      expect([data.param1, data.param2].map((p: string) => answer(p)).sort()).toEqual([
        '1234',
        '123456',
      ]);
    });

    it('should answer 404 not_found when initiating an unknown mandate', async () => {
      expectError(await initiate(uniqueRef('md')), 404, 'not_found');
    });

    it('should reject validation before initiation with 409 activation_not_initiated', async () => {
      const reference = await pendingMandate();
      const res = await validateActivation(reference, { param1: 'otp', param2: 'pin' });
      expectError(res, 409, 'activation_not_initiated', NOT_INITIATED);
    });

    it('should leave the mandate pending when validation came before initiation', async () => {
      const reference = await pendingMandate();
      await validateActivation(reference, { param1: 'otp', param2: 'pin' });
      expect((await getMandate(reference)).body.data.status).toBe('pending');
    });

    it('should activate the mandate with OTP 123456 and PIN 1234', async () => {
      const reference = await pendingMandate();
      const challenge = (await initiate(reference)).body.data;
      const res = await validateActivation(reference, challenge);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({ mandate_reference: reference, status: 'active' });
      expect((await getMandate(reference)).body.data.status).toBe('active');
    });

    it.each(['otp', 'pin'] as const)(
      'should reject a wrong %s with 422 invalid_activation_credentials and keep the mandate pending',
      async (wrong) => {
        const reference = await pendingMandate();
        const challenge = (await initiate(reference)).body.data;
        const res = await validateActivation(reference, challenge, wrong);
        expectError(res, 422, 'invalid_activation_credentials');
        expect((await getMandate(reference)).body.data.status).toBe('pending');
      },
    );

    it('should answer the same stable code for a wrong OTP and a wrong PIN', async () => {
      const a = await pendingMandate();
      const b = await pendingMandate();
      const resA = await validateActivation(a, (await initiate(a)).body.data, 'otp');
      const resB = await validateActivation(b, (await initiate(b)).body.data, 'pin');
      expect(resA.body.code).toBe(resB.body.code);
    });

    it('should still accept the right answers after a wrong attempt', async () => {
      const reference = await pendingMandate();
      const challenge = (await initiate(reference)).body.data;
      await validateActivation(reference, challenge, 'otp');
      expectSuccess(await validateActivation(reference, challenge));
    });

    it('should reject a body mandate_reference that differs from the path', async () => {
      const reference = await pendingMandate();
      const challenge = (await initiate(reference)).body.data;
      const res = await sendActivation(reference, {
        mandate_reference: 'another',
        param1: challenge.param1,
        value1: answer(challenge.param1),
        param2: challenge.param2,
        value2: answer(challenge.param2),
      });
      expectValidation(res, ['mandate_reference']);
    });

    it('should refuse to initiate activation of an active mandate with 409', async () => {
      const reference = await activeMandate();
      expectError(await initiate(reference), 409, 'mandate_already_active');
    });

    it('should accept the answers with otp and pin in either order', async () => {
      const reference = await pendingMandate();
      await initiate(reference);
      const res = await sendActivation(reference, {
        mandate_reference: reference,
        param1: 'pin',
        value1: '1234',
        param2: 'otp',
        value2: '123456',
      });
      expectSuccess(res);
    });

    it('should reject parameter names other than the challenge names with 400', async () => {
      const reference = await pendingMandate();
      await initiate(reference);
      const res = await sendActivation(reference, {
        mandate_reference: reference,
        param1: 'foo',
        value1: '123456',
        param2: 'pin',
        value2: '1234',
      });
      expectValidation(res, ['param1']);
      expect((await getMandate(reference)).body.data.status).toBe('pending');
    });

    it('should allow initiating activation twice', async () => {
      const reference = await pendingMandate();
      expectSuccess(await initiate(reference));
      const again = await initiate(reference);
      expectSuccess(again);
      expectSuccess(await validateActivation(reference, again.body.data));
    });

    it('should list every missing validation field as an issue', async () => {
      const reference = await pendingMandate();
      await initiate(reference);
      const res = await sendActivation(reference, {});
      expectValidation(res, ['mandate_reference', 'param1', 'value1', 'param2', 'value2']);
    });

    it('should send a signed mandate_activated webhook', async () => {
      const reference = await activeMandate();
      const hook = await hooks.waitFor(
        (h) =>
          h.body?.event_type === 'mandate_activated' &&
          JSON.stringify(h.body.data).includes(reference),
        { tick: api.tick },
      );
      expect(typeof hook.body.event_id).toBe('string');
      expectIsoTimestamp(hook.body.timestamp);
      await expectSignedWebhook(hook);
    });

    it('should not send mandate_activated for a wrong answer', async () => {
      const reference = await pendingMandate();
      await validateActivation(reference, (await initiate(reference)).body.data, 'pin');
      await api.tick();
      expect(
        (await api.webhooks()).filter(
          (w) => w.event_type === 'mandate_activated' && JSON.stringify(w.body).includes(reference),
        ),
      ).toEqual([]);
    });
  });

  describe('PATCH /direct-debits/mandates/{mandate_reference}/cancel', () => {
    it('should cancel a pending mandate', async () => {
      const reference = await pendingMandate();
      const res = await cancel(reference);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({ mandate_reference: reference, status: 'cancelled' });
      expect((await getMandate(reference)).body.data.status).toBe('cancelled');
    });

    it('should cancel an active mandate', async () => {
      const reference = await activeMandate();
      expectSuccess(await cancel(reference));
      expect((await getMandate(reference)).body.data.status).toBe('cancelled');
    });

    it('should answer 404 not_found for an unknown mandate', async () => {
      expectError(await cancel(uniqueRef('md')), 404, 'not_found');
    });

    it('should not activate a cancelled mandate', async () => {
      const reference = await pendingMandate();
      const challenge = (await initiate(reference)).body.data;
      await cancel(reference);
      const res = await validateActivation(reference, challenge);
      expectError(res, 409, 'mandate_cancelled');
      expect((await getMandate(reference)).body.data.status).toBe('cancelled');
    });

    it('should answer success again when cancelling a cancelled mandate', async () => {
      const reference = await pendingMandate();
      await cancel(reference);
      const res = await cancel(reference);
      expectSuccess(res);
      expect(res.body.data.status).toBe('cancelled');
    });

    it('should not initiate activation of a cancelled mandate', async () => {
      const reference = await pendingMandate();
      await cancel(reference);
      expectError(await initiate(reference), 409, 'mandate_cancelled');
    });
  });

  describe('POST /direct-debits/debit', () => {
    it('should accept a debit on an active mandate within its window as processing', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      const res = await debit(mandate, {
        payment_reference: paymentReference,
        debit_amount: 250.75,
        narration: 'June plan',
      });
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({
        payment_reference: paymentReference,
        mandate_reference: mandate,
        debit_amount: 250.75,
        narration: 'June plan',
        status: 'processing',
      });
    });

    it('should reject a debit on a pending mandate with 409 mandate_not_active', async () => {
      const mandate = await pendingMandate();
      await advanceDays(1);
      expectError(await debit(mandate), 409, 'mandate_not_active', NOT_ACTIVE);
    });

    it('should reject a debit on a mandate whose activation was only initiated', async () => {
      const mandate = await pendingMandate();
      await initiate(mandate);
      await advanceDays(1);
      expectError(await debit(mandate), 409, 'mandate_not_active', NOT_ACTIVE);
    });

    it('should reject a debit on a cancelled mandate with 409 mandate_not_active', async () => {
      const mandate = await activeMandate();
      await cancel(mandate);
      await advanceDays(1);
      expectError(await debit(mandate), 409, 'mandate_not_active', NOT_ACTIVE);
    });

    it('should answer 404 not_found for an unknown mandate', async () => {
      expectError(await debit(uniqueRef('md')), 404, 'not_found');
    });

    it('should reject a customer_email that differs from the mandate with an issue at customer_email', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      const res = await debit(mandate, {
        customer_email: 'mallory@example.com',
        payment_reference: paymentReference,
      });
      expectValidation(res, ['customer_email']);
      expectError(await debitStatus(paymentReference), 404, 'not_found');
    });

    it('should match customer_email case-insensitively', async () => {
      const mandate = await debitableMandate();
      expectSuccess(await debit(mandate, { customer_email: 'ADA@Example.com' }));
    });

    it('should reject a debit before start_date with 422 mandate_not_started', async () => {
      const mandate = await activeMandate();
      expectError(await debit(mandate), 422, 'mandate_not_started');
    });

    it('should accept a debit on start_date itself', async () => {
      const mandate = await debitableMandate();
      expectSuccess(await debit(mandate));
    });

    it('should accept a debit on end_date itself', async () => {
      const mandate = await activeMandate({ monthly_debit_count: 100 });
      await advanceDays(365);
      expectSuccess(await debit(mandate));
    });

    it('should reject a debit the day after end_date with 422 mandate_expired', async () => {
      const mandate = await activeMandate();
      await advanceDays(366);
      expectError(await debit(mandate), 422, 'mandate_expired');
    });

    it('should reject a reused payment_reference with 409 duplicate_reference', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      expectSuccess(await debit(mandate, { payment_reference: paymentReference }));
      expectError(
        await debit(mandate, { payment_reference: paymentReference }),
        409,
        'duplicate_reference',
      );
    });

    it('should list every missing field as an issue', async () => {
      expectValidation(await api.call('POST', '/direct-debits/debit', {}), [
        'mandate_reference',
        'debit_amount',
        'narration',
        'customer_email',
        'payment_reference',
      ]);
    });

    it('should accept debit_amount as a decimal string', async () => {
      const mandate = await debitableMandate();
      const res = await debit(mandate, { debit_amount: '12.50' });
      expectSuccess(res);
      expect(res.body.data.debit_amount).toBe(12.5);
    });

    it('should reject a debit_amount with 3 decimals with an issue at debit_amount', async () => {
      const mandate = await debitableMandate();
      expectValidation(await debit(mandate, { debit_amount: 1.001 }), ['debit_amount']);
    });
  });

  describe('monthly limits', () => {
    /** An active mandate, with the clock on its start_date and at least 2 days left in the month. */
    async function mandateMidMonth(overrides: Record<string, unknown>): Promise<string> {
      const mandate = await debitableMandate(overrides);
      if ((await daysLeftInMonth()) < 2) await advanceDays((await daysToNextMonth()) + 1);
      return mandate;
    }

    it('should allow debits summing exactly to monthly_amount', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 10 });
      expectSuccess(await debit(mandate, { debit_amount: 400.1 }));
      expectSuccess(await debit(mandate, { debit_amount: 599.9 }));
    });

    it('should reject a debit that takes the month above monthly_amount with 422', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 10 });
      await debit(mandate, { debit_amount: 400.1 });
      await debit(mandate, { debit_amount: 599.9 });
      expectError(await debit(mandate, { debit_amount: 0.01 }), 422, 'monthly_limit_exceeded');
    });

    it('should reject a single debit above monthly_amount with 422', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000 });
      expectError(await debit(mandate, { debit_amount: 1000.01 }), 422, 'monthly_limit_exceeded');
    });

    it('should count settled debits towards the month', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 10 });
      await debit(mandate, { debit_amount: 1000 });
      await api.settle();
      expectError(await debit(mandate, { debit_amount: 1 }), 422, 'monthly_limit_exceeded');
    });

    it('should allow monthly_debit_count debits and reject one more with 422', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 3 });
      for (let i = 0; i < 3; i += 1) expectSuccess(await debit(mandate, { debit_amount: 1 }));
      expectError(await debit(mandate, { debit_amount: 1 }), 422, 'monthly_limit_exceeded');
    });

    it('should count limits within a calendar month across days', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 2 });
      expectSuccess(await debit(mandate, { debit_amount: 1 }));
      await advanceDays(1);
      expectSuccess(await debit(mandate, { debit_amount: 1 }));
      expectError(await debit(mandate, { debit_amount: 1 }), 422, 'monthly_limit_exceeded');
    });

    it('should reset the amount limit on the 1st of the next month (UTC)', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 10 });
      expectSuccess(await debit(mandate, { debit_amount: 1000 }));
      await advanceDays(await daysToNextMonth());
      expect(isoDate((await api.state()).now).endsWith('-01')).toBe(true);
      expectSuccess(await debit(mandate, { debit_amount: 1000 }));
    });

    it('should reset the count limit on the 1st of the next month (UTC)', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 1 });
      expectSuccess(await debit(mandate, { debit_amount: 1 }));
      expectError(await debit(mandate, { debit_amount: 1 }), 422, 'monthly_limit_exceeded');
      await advanceDays(await daysToNextMonth());
      expectSuccess(await debit(mandate, { debit_amount: 1 }));
    });

    it('should not count a failed (.13) debit towards the month', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 100, monthly_debit_count: 1 });
      expectSuccess(await debit(mandate, { debit_amount: 99.13 }));
      await api.settle();
      expectSuccess(await debit(mandate, { debit_amount: 100 }));
    });

    it('should keep the limits of one mandate apart from another', async () => {
      const a = await mandateMidMonth({ monthly_amount: 1000, monthly_debit_count: 1 });
      const b = await activeMandate({ monthly_amount: 1000, monthly_debit_count: 1 });
      expectSuccess(await debit(a, { debit_amount: 1000 }));
      // b starts the day after the current sandbox date.
      await advanceDays(1);
      expectSuccess(await debit(b, { debit_amount: 1000 }));
    });

    it('should not debit anything when the limit rejects the debit', async () => {
      const mandate = await mandateMidMonth({ monthly_amount: 10, monthly_debit_count: 5 });
      const paymentReference = uniqueRef('dd');
      await debit(mandate, { debit_amount: 11, payment_reference: paymentReference });
      expectError(await debitStatus(paymentReference), 404, 'not_found');
    });
  });

  describe('settlement', () => {
    it('should settle a debit as success and credit the balance', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      const before = await api.balanceMinor();
      await debit(mandate, { payment_reference: paymentReference, debit_amount: 250.5 });
      expect(await api.balanceMinor()).toBe(before);
      await api.settle();
      expect((await debitStatus(paymentReference)).body.data.status).toBe('success');
      expect(await api.balanceMinor()).toBe(before + toMinor(250.5));
    });

    it('should send a signed direct_debit_success webhook with the spec data', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      await debit(mandate, { payment_reference: paymentReference, debit_amount: 42.42 });
      await api.settle();
      const hook = await hooks.waitFor(webhookWith('payment_reference', paymentReference), {
        tick: api.tick,
      });
      expect(hook.body).toMatchObject({
        event_type: 'direct_debit_success',
        data: {
          payment_reference: paymentReference,
          mandate_reference: mandate,
          debit_amount: 42.42,
          status: 'success',
        },
      });
      await expectSignedWebhook(hook);
    });

    it('should fail a debit whose amount ends in .13 and credit nothing', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      const before = await api.balanceMinor();
      expectSuccess(
        await debit(mandate, { payment_reference: paymentReference, debit_amount: 20.13 }),
      );
      await api.settle();
      expect((await debitStatus(paymentReference)).body.data.status).toBe('failed');
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should send direct_debit_failure for a debit ending in .13', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      await debit(mandate, { payment_reference: paymentReference, debit_amount: 7.13 });
      await api.settle();
      const hook = await hooks.waitFor(webhookWith('payment_reference', paymentReference), {
        tick: api.tick,
      });
      expect(hook.body.event_type).toBe('direct_debit_failure');
      expect(hook.body.data.mandate_reference).toBe(mandate);
    });

    it('should not fail a debit whose amount merely contains 13', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      await debit(mandate, { payment_reference: paymentReference, debit_amount: 13.1 });
      await api.settle();
      expect((await debitStatus(paymentReference)).body.data.status).toBe('success');
    });

    it('should stay processing before 5 sandbox seconds', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      await debit(mandate, { payment_reference: paymentReference });
      await api.advance(2);
      await api.tick();
      expect((await debitStatus(paymentReference)).body.data.status).toBe('processing');
    });
  });

  describe('POST /direct-debits/disburse', () => {
    function disburseBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
      return {
        reference: uniqueRef('ds'),
        amount: 1200.5,
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
        narration: 'Collected funds',
        ...overrides,
      };
    }

    it('should queue a processing disbursement with the documented transfer fee', async () => {
      const body = disburseBody();
      const res = await api.call('POST', '/direct-debits/disburse', body);
      expectSuccess(res);
      expect(typeof res.body.message).toBe('string');
      expect(res.body.data).toMatchObject({
        reference: body.reference,
        amount: 1200.5,
        fee: 10,
        currency: 'NGN',
        destination_bank_code: '058',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
        narration: 'Collected funds',
        status: 'processing',
      });
      expectIsoTimestamp(res.body.data.created_at);
    });

    it('should debit the balance by amount plus fee', async () => {
      const before = await api.balanceMinor();
      await api.call('POST', '/direct-debits/disburse', disburseBody({ amount: '300.00' }));
      expect(await api.balanceMinor()).toBe(before - toMinor(300) - toMinor(10));
    });

    it('should be verifiable as a transfer that settles to success', async () => {
      const body = disburseBody();
      await api.call('POST', '/direct-debits/disburse', body);
      await api.settle();
      const res = await api.call('GET', `/disbursements/verify/${body.reference}`);
      expectSuccess(res);
      expect(res.body.data.transfer_status).toBe('success');
    });

    it('should reject a reused reference with 409 duplicate_reference', async () => {
      const body = disburseBody();
      expectSuccess(await api.call('POST', '/direct-debits/disburse', body));
      expectError(
        await api.call('POST', '/direct-debits/disburse', body),
        409,
        'duplicate_reference',
      );
    });

    it('should reject an amount above the balance with 409 Insufficient funds', async () => {
      const before = await api.balanceMinor();
      const res = await api.call(
        'POST',
        '/direct-debits/disburse',
        disburseBody({ amount: 2_000_000 }),
      );
      expectError(res, 409, 'insufficient_funds', 'Insufficient funds');
      expect(await api.balanceMinor()).toBe(before);
    });

    it('should list every missing required field as an issue', async () => {
      expectValidation(await api.call('POST', '/direct-debits/disburse', {}), [
        'reference',
        'amount',
        'currency',
        'destination_bank_code',
        'destination_bank_account',
      ]);
    });
  });

  describe('GET /direct-debits/status/{payment_reference}', () => {
    it('should return the debit with every spec field', async () => {
      const mandate = await debitableMandate();
      const paymentReference = uniqueRef('dd');
      await debit(mandate, {
        payment_reference: paymentReference,
        debit_amount: 99.99,
        narration: 'Gym',
      });
      const res = await debitStatus(paymentReference);
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        payment_reference: paymentReference,
        mandate_reference: mandate,
        debit_amount: 99.99,
        narration: 'Gym',
        status: 'processing',
      });
      expectTimestamps(res.body.data);
    });

    it('should answer 404 not_found for an unknown debit', async () => {
      expectError(await debitStatus(uniqueRef('dd')), 404, 'not_found');
    });
  });
});
