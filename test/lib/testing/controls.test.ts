/**
 * Contract tests of the sandbox emulator's test controls over real HTTP (docs/sandbox.md:
 * `/__sandbox/` state, clock, reset, faults and response variants).
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { creationRequests } from '../../support/endpoints.ts';
import {
  expectError,
  expectIsoTimestamp,
  expectSuccess,
  expectValidation,
} from '../../support/expect-api.ts';
import { paymentBody, refundBody, transferBody } from '../../support/payloads.ts';
import { OPENING_BALANCE, toMinor, uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient } from '../../support/sandbox-fixture.ts';

const api = useSandboxClient();

async function faults(body: Record<string, unknown>): Promise<void> {
  const res = await api.control('faults', body);
  expect(res.status, res.text).toBe(200);
}

const initializePayment = creationRequests(api, '/payments/initialize', paymentBody).send;
const initializeTransfer = creationRequests(api, '/disbursements/initialize', transferBody).send;

/** A payment completed as success through the control; returns its reference. */
async function paidPayment(): Promise<string> {
  const { reference } = (await initializePayment()).body;
  await api.complete(reference, 'success');
  return reference;
}

async function verifyTransfer(reference: string) {
  return api.call('GET', `/disbursements/verify/${reference}`);
}

describe('sandbox controls', () => {
  describe('GET /__sandbox/', () => {
    it('should list every control, each answering at its path', async () => {
      for (const path of ['/__sandbox/', '/__sandbox']) {
        const res = await fetch(`${api.url}${path}`);
        expect(res.status).toBe(200);
        const { data } = (await res.json()) as { data: { method: string; path: string }[] };
        expect(data).toContainEqual({ method: 'GET', path: '/__sandbox/state' });
        expect(data).toContainEqual({ method: 'POST', path: '/__sandbox/faults/rules' });
        // The readable ones answer (none is a 404 the index would point at).
        for (const control of data.filter((c) => c.method === 'GET')) {
          expect((await fetch(`${api.url}${control.path}`)).status, control.path).toBe(200);
        }
      }
    });
  });

  describe('GET /__sandbox/state', () => {
    beforeEach(async () => {
      await api.reset();
    });

    it('should report the sandbox time, the opening balance in NGN and counts', async () => {
      const res = await api.control('state');
      expect(res.status).toBe(200);
      expectIsoTimestamp(res.body.now);
      expect(res.body.balance).toBe(OPENING_BALANCE);
      expect(res.body.currency).toBe('NGN');
      expect(typeof res.body.counts).toBe('object');
      for (const count of Object.values(res.body.counts)) expect(count).toBe(0);
    });

    it('should follow real time when the clock is not advanced', async () => {
      const { now } = await api.state();
      expect(Math.abs(Date.parse(now) - Date.now())).toBeLessThan(5_000);
    });

    it('should count created payments', async () => {
      await initializePayment();
      const { counts } = await api.state();
      expect(counts.payments).toBe(1);
      expect(counts.transfers).toBe(0);
    });
  });

  describe('POST /__sandbox/clock/advance', () => {
    it('should move the sandbox time forward by the given seconds', async () => {
      const before = Date.parse((await api.state()).now);
      const res = await api.control('clock/advance', { seconds: 3_600 });
      expect(res.status).toBe(200);
      const after = Date.parse((await api.state()).now);
      expect(after - before).toBeGreaterThanOrEqual(3_600_000);
      expect(after - before).toBeLessThan(3_600_000 + 2_000);
    });

    it('should answer the new sandbox time and how many items settled', async () => {
      await api.reset();
      await initializeTransfer();
      await initializeTransfer();
      const res = await api.control('clock/advance', { seconds: 6 });
      expectSuccess(res);
      expect(res.body.data.settled).toBe(2);
      expectIsoTimestamp(res.body.data.now);
      const stateNow = Date.parse((await api.state()).now);
      expect(stateNow - Date.parse(res.body.data.now)).toBeGreaterThanOrEqual(0);
      expect(stateNow - Date.parse(res.body.data.now)).toBeLessThan(2_000);
    });

    it('should stamp new items with the advanced sandbox time', async () => {
      await api.advance(10 * 86_400);
      const { reference } = (await initializePayment()).body;
      const created = (await api.call('GET', `/payments/verify/${reference}`)).body.data.created_at;
      expect(Date.parse(created) - Date.now()).toBeGreaterThan(9 * 86_400_000);
    });

    it('should settle due items as soon as the clock is advanced', async () => {
      await api.reset();
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference });
      await api.control('clock/advance', { seconds: 6 });
      const records = await api.webhooks();
      expect(records.map((r) => r.body.data.reference)).toContain(reference);
    });

    it.each([
      ['a negative number', { seconds: -1 }],
      ['more than ten years', { seconds: 11 * 366 * 86_400 }],
      ['a string', { seconds: 'ten' }],
      ['nothing', {}],
    ])('should reject %s as seconds with an issue at seconds', async (_label, body) => {
      expectValidation(await api.control('clock/advance', body), ['seconds']);
    });
  });

  describe('POST /__sandbox/reset', () => {
    it('should forget payments, restore the opening balance and empty counts', async () => {
      const { reference } = (await initializePayment()).body;
      await initializeTransfer({ amount: 1000 });
      const res = await api.control('reset', {});
      expect(res.status).toBe(200);
      expectError(await api.call('GET', `/payments/verify/${reference}`), 404, 'not_found');
      const state = await api.state();
      expect(state.balance).toBe(OPENING_BALANCE);
      for (const count of Object.values(state.counts)) expect(count).toBe(0);
    });

    it('should bring the sandbox clock back to real time', async () => {
      await api.advance(5 * 86_400);
      await api.reset();
      const { now } = await api.state();
      expect(Math.abs(Date.parse(now) - Date.now())).toBeLessThan(5_000);
    });

    it('should clear injected faults', async () => {
      await faults({ error_rate: 1 });
      await api.reset();
      expectSuccess(await api.call('GET', '/merchants/transactions'));
    });

    it('should free references for reuse', async () => {
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference });
      await api.reset();
      expectSuccess(await initializeTransfer({ reference }));
    });

    it('should empty the webhook log', async () => {
      await initializeTransfer();
      await api.settle();
      expect((await api.webhooks()).length).toBeGreaterThan(0);
      await api.reset();
      expect(await api.webhooks()).toEqual([]);
    });
  });

  describe('GET /__sandbox/webhooks', () => {
    it('should list emitted events with their delivery state', async () => {
      await api.reset();
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference });
      await api.settle();
      const res = await api.control('webhooks');
      expectSuccess(res);
      const [record] = res.body.data;
      expect(record).toMatchObject({
        event_type: 'disbursement_success',
        delivery: 'no_target',
        body: { event_type: 'disbursement_success', data: { reference } },
      });
      expect(record.body.event_id).toBe(record.event_id);
    });
  });

  describe('POST /__sandbox/faults', () => {
    afterEach(async () => {
      await faults({});
    });

    it('should delay API answers by latency_ms', async () => {
      await faults({ latency_ms: 400 });
      const started = performance.now();
      expectSuccess(await api.call('GET', '/merchants/transactions'));
      expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    });

    it('should stop delaying once cleared with {}', async () => {
      await faults({ latency_ms: 1_000 });
      await faults({});
      const started = performance.now();
      await api.call('GET', '/merchants/transactions');
      expect(performance.now() - started).toBeLessThan(500);
    });

    it('should answer 503 to every API request at error_rate 1', async () => {
      await faults({ error_rate: 1 });
      const res = await api.call('GET', '/merchants/transactions');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('error');
      expect(typeof res.body.code).toBe('string');
    });

    it('should commit nothing when error_rate answered 503', async () => {
      await api.reset();
      await faults({ error_rate: 1 });
      const reference = uniqueRef('tr');
      const res = await initializeTransfer({ reference });
      expect(res.status).toBe(503);
      await faults({});
      expectError(await verifyTransfer(reference), 404, 'not_found');
      expect((await api.state()).balance).toBe(OPENING_BALANCE);
    });

    it('should keep the controls reachable while error_rate is 1', async () => {
      await faults({ error_rate: 1 });
      expect((await api.control('state')).status).toBe(200);
    });

    it('should never fail at error_rate 0', async () => {
      await faults({ error_rate: 0 });
      for (let i = 0; i < 5; i += 1) {
        expect((await api.call('GET', '/merchants/transactions')).status).toBe(200);
      }
    });

    it('should make fetch reject at drop_rate 1', async () => {
      await faults({ drop_rate: 1 });
      await expect(initializeTransfer()).rejects.toThrow();
    });

    it('should commit the request whose connection it dropped', async () => {
      await api.reset();
      await faults({ drop_rate: 1 });
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference, amount: 10 }).catch(() => undefined);
      await faults({});
      const res = await verifyTransfer(reference);
      expectSuccess(res);
      expect(res.body.data.transfer_status).toBe('processing');
      expect(toMinor((await api.state()).balance)).toBe(
        toMinor(OPENING_BALANCE) - toMinor(10) - toMinor(res.body.data.fee),
      );
    });

    it.each([
      ['error_rate above 1', { error_rate: 2 }, 'error_rate'],
      ['a negative drop_rate', { drop_rate: -0.5 }, 'drop_rate'],
      ['a negative latency_ms', { latency_ms: -1 }, 'latency_ms'],
      ['an unknown variant', { variant: 'compact' }, 'variant'],
    ])('should reject %s with an issue naming it', async (_label, body, path) => {
      expectValidation(await api.control('faults', body), [path]);
    });
  });

  describe('response variant flat', () => {
    beforeAll(async () => {
      await api.reset();
    });

    afterEach(async () => {
      await faults({});
    });

    it('should answer payment verify flat with status, message, reference, transaction_id', async () => {
      const { reference } = (await initializePayment()).body;
      await faults({ variant: 'flat' });
      const res = await api.call('GET', `/payments/verify/${reference}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(res.body.reference).toBe(reference);
      expect(typeof res.body.transaction_id).toBe('string');
      expect(typeof res.body.status).toBe('string');
      expect(typeof res.body.message).toBe('string');
    });

    it('should answer transfer initialize flat with status processing, message, reference', async () => {
      await faults({ variant: 'flat' });
      const reference = uniqueRef('tr');
      const res = await initializeTransfer({ reference });
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(res.body).toMatchObject({ status: 'processing', reference });
      expect(typeof res.body.message).toBe('string');
    });

    it('should answer transfer verify flat with the transfer state in status', async () => {
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference, amount: 75 });
      await api.settle();
      await faults({ variant: 'flat' });
      const res = await verifyTransfer(reference);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(res.body).toMatchObject({
        status: 'success',
        reference,
        amount: 75,
        currency: 'NGN',
        destination_bank_account: '0123456789',
        destination_bank_name: 'GTBank',
        narration: 'Payout',
      });
      expectIsoTimestamp(res.body.completed_at);
    });

    it('should answer refund retrieve flat with the refund state in status', async () => {
      const pay = await paidPayment();
      const refundReference = uniqueRef('rf');
      await api.call(
        'POST',
        '/refunds/initialize',
        refundBody(pay, { refund_reference: refundReference }),
      );
      await faults({ variant: 'flat' });
      const res = await api.call('GET', `/refunds/${refundReference}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(res.body).toMatchObject({
        status: 'processing',
        refund_reference: refundReference,
        payment_reference: pay,
        amount: 100,
      });
    });

    it('should answer refund initialize flat with status processing', async () => {
      const pay = await paidPayment();
      await faults({ variant: 'flat' });
      const res = await api.call('POST', '/refunds/initialize', refundBody(pay));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'processing', payment_reference: pay });
    });

    it('should answer count-by-status flat with the three counts at the top level', async () => {
      await faults({ variant: 'flat' });
      const res = await api.call('GET', '/refunds/count-by-status');
      expect(res.status).toBe(200);
      expect(res.body.data).toBeUndefined();
      expect(typeof res.body.processing).toBe('number');
      expect(typeof res.body.success).toBe('number');
      expect(typeof res.body.failed).toBe('number');
    });

    it('should go back to the enveloped variant with variant enveloped', async () => {
      const reference = uniqueRef('tr');
      await initializeTransfer({ reference });
      await faults({ variant: 'flat' });
      await faults({ variant: 'enveloped' });
      const res = await verifyTransfer(reference);
      expectSuccess(res);
      expect(res.body.data.reference).toBe(reference);
    });

    it('should keep error bodies in the usual error shape under the flat variant', async () => {
      await faults({ variant: 'flat' });
      expectError(await verifyTransfer(uniqueRef('missing')), 404, 'not_found');
    });
  });
});
