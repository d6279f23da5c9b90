/**
 * Timing fault rules on records, in-process (`createSandbox().fetch`, docs/sandbox.md,
 * "Timing faults"): reads that lag behind the provider's writes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { paymentBody, refundBody, transferBody, uniqueRef } from '../../support/payloads.ts';
import { type InProcess, inProcess } from './timing-helpers.ts';

/** Long enough that the calls made inside the window land in it on a slow machine. */
const WINDOW_MS = 1_500;

/** The destination account whose transfer fails (a magic value). */
const FAILS = '0000000000';

let s: InProcess;
afterEach(() => {
  s?.sandbox.close();
  receiver.received.length = 0;
});

/** A webhook receiver behind the sandbox's `fetch` option, answering 200. */
const receiver = {
  received: [] as Array<{ event_type: string; data: Record<string, unknown> }>,
  fetch: async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    receiver.received.push(JSON.parse(String(init?.body)));
    return new Response('ok');
  },
  /** Event types received for one reference, in order. */
  types: (reference: string) =>
    receiver.received
      .filter((hook) => hook.data.reference === reference)
      .map((hook) => hook.event_type),
};

const verify = (reference: string) => s.call('GET', `/disbursements/verify/${reference}`);
const initialize = (body: Record<string, unknown>) =>
  s.call('POST', '/disbursements/initialize', body);
const listedStatus = async (reference: string) => {
  const res = await s.call('GET', '/merchants/disbursements?page_size=100');
  return res.body.data.data.find((t: { reference: string }) => t.reference === reference)
    ?.transfer_status;
};
const listed = async (reference: string) => {
  const res = await s.call('GET', '/merchants/disbursements?page_size=100');
  return res.body.data.data.some((t: { reference: string }) => t.reference === reference);
};

describe('record faults', () => {
  describe('visible_after', () => {
    it('should answer and commit at once but read as absent until after_ms, still refusing a duplicate', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      const rule = await s.rule({ fault: 'visible_after', reference, after_ms: WINDOW_MS });
      const opening = (await s.control('state')).body.balance;
      expect((await initialize(body)).status).toBe(200);
      expect((await s.control('state')).body.balance).toBeLessThan(opening);
      expect((await verify(reference)).status).toBe(404);
      expect(await listed(reference)).toBe(false);
      const resend = await initialize(body);
      expect(resend.status).toBe(409);
      expect(resend.body.code).toBe('duplicate_reference');
      await s.sandbox.idle();
      expect((await verify(reference)).status).toBe(200);
      expect(await listed(reference)).toBe(true);
      expect((await s.control('faults/rules')).body.data).toEqual([
        expect.objectContaining({ id: rule.id, fired: 1 }),
      ]);
    });

    it('should hide every record a route creates when the rule names only the route', async () => {
      s = inProcess();
      await s.rule({
        fault: 'visible_after',
        route: 'POST /payments/initialize',
        after_ms: WINDOW_MS,
      });
      const created = await s.call(
        'POST',
        '/payments/initialize',
        paymentBody({ reference: undefined }),
      );
      expect(created.status).toBe(200);
      const { reference } = created.body;
      expect((await s.call('GET', `/payments/verify/${reference}`)).status).toBe(404);
      // Other kinds are not touched.
      const transfer = String(transferBody().reference);
      await initialize(transferBody({ reference: transfer }));
      expect((await verify(transfer)).status).toBe(200);
      await s.sandbox.idle();
      expect((await s.call('GET', `/payments/verify/${reference}`)).status).toBe(200);
    });

    it('should hide a record that already exists when the rule names its reference', async () => {
      s = inProcess();
      const reference = uniqueRef('tr');
      await initialize(transferBody({ reference }));
      expect((await verify(reference)).status).toBe(200);
      await s.rule({ fault: 'visible_after', reference, after_ms: WINDOW_MS });
      expect((await verify(reference)).status).toBe(404);
      await s.sandbox.idle();
      expect((await verify(reference)).status).toBe(200);
    });

    it('should apply to the record a deferred commit creates', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      await s.rule({
        fault: 'error_then_commit',
        reference,
        route: 'POST /disbursements/initialize',
        after_ms: 0,
      });
      await s.rule({ fault: 'visible_after', reference, after_ms: WINDOW_MS });
      expect((await initialize(body)).status).toBe(503);
      await s.sandbox.idle();
      expect((await s.control('state')).body.counts.transfers).toBe(1);
      expect((await verify(reference)).status).toBe(200);
    });
  });

  describe('final_after', () => {
    it('should keep a transfer processing past settleAfterSec and settle it after_ms after creation', async () => {
      s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
      const reference = uniqueRef('tr');
      await s.rule({ fault: 'final_after', reference, after_ms: WINDOW_MS });
      await initialize(transferBody({ reference }));
      // The sandbox clock passes the usual 5 s: this one waits for its own timer.
      await s.control('clock/advance', { seconds: 60 });
      await s.sandbox.tick();
      expect((await verify(reference)).body.data.transfer_status).toBe('processing');
      expect(receiver.types(reference)).toEqual([]);
      await s.sandbox.idle();
      expect((await verify(reference)).body.data.transfer_status).toBe('success');
      expect(receiver.types(reference)).toEqual(['disbursement_success']);
    });

    it('should hold a transfer already processing when the rule names its reference', async () => {
      s = inProcess();
      const reference = uniqueRef('tr');
      await initialize(transferBody({ reference, destination_bank_account: FAILS }));
      const rule = await s.rule({ fault: 'final_after', reference, after_ms: WINDOW_MS });
      await s.control('clock/advance', { seconds: 60 });
      expect((await verify(reference)).body.data.transfer_status).toBe('processing');
      await s.sandbox.idle();
      expect((await verify(reference)).body.data.transfer_status).toBe('failed');
      expect((await s.control('faults/rules')).body.data[0]).toMatchObject({
        id: rule.id,
        fired: 1,
      });
    });

    it('should hold every refund of a route when the rule names only the route', async () => {
      s = inProcess();
      const payment = await s.call('POST', '/payments/initialize', paymentBody());
      await s.control(`payments/${payment.body.reference}/complete`, { outcome: 'success' });
      await s.rule({
        fault: 'final_after',
        route: 'POST /refunds/initialize',
        after_ms: WINDOW_MS,
      });
      const refundReference = uniqueRef('rf');
      const refund = await s.call(
        'POST',
        '/refunds/initialize',
        refundBody(payment.body.reference, { refund_reference: refundReference }),
      );
      expect(refund.status).toBe(200);
      await s.control('clock/advance', { seconds: 60 });
      const read = () => s.call('GET', `/refunds/${refundReference}`);
      expect((await read()).body.data.refund_status).toBe('processing');
      await s.sandbox.idle();
      expect((await read()).body.data.refund_status).toBe('success');
    });
  });

  describe('webhook_early', () => {
    it('should send disbursement_failed while verify still says processing, until after_ms', async () => {
      s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
      const reference = uniqueRef('tr');
      await s.rule({ fault: 'webhook_early', reference, after_ms: WINDOW_MS });
      await initialize(transferBody({ reference, destination_bank_account: FAILS }));
      await s.control('clock/advance', { seconds: 6 });
      await s.sandbox.tick();
      expect(receiver.types(reference)).toEqual(['disbursement_failed']);
      expect((await verify(reference)).body.data.transfer_status).toBe('processing');
      expect(await listedStatus(reference)).toBe('processing');
      await s.sandbox.idle();
      expect((await verify(reference)).body.data.transfer_status).toBe('failed');
      expect(await listedStatus(reference)).toBe('failed');
      // One webhook: the lag ends without a second one.
      expect(receiver.types(reference)).toEqual(['disbursement_failed']);
    });

    it('should send charge_success while payment verify still says processing, until after_ms', async () => {
      s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
      await s.rule({
        fault: 'webhook_early',
        route: 'POST /payments/initialize',
        after_ms: WINDOW_MS,
      });
      const { reference } = (await s.call('POST', '/payments/initialize', paymentBody())).body;
      await s.control(`payments/${reference}/complete`, { outcome: 'success' });
      await s.sandbox.tick();
      expect(receiver.types(reference)).toEqual(['charge_success']);
      const read = () => s.call('GET', `/payments/verify/${reference}`);
      expect((await read()).body.data.status).toBe('processing');
      await s.sandbox.idle();
      expect((await read()).body.data.status).toBe('success');
    });

    it('should leave a record without the rule alone', async () => {
      s = inProcess();
      await s.rule({ fault: 'webhook_early', reference: uniqueRef('other'), after_ms: WINDOW_MS });
      const reference = uniqueRef('tr');
      await initialize(transferBody({ reference }));
      await s.control('clock/advance', { seconds: 6 });
      expect((await verify(reference)).body.data.transfer_status).toBe('success');
    });
  });
});
