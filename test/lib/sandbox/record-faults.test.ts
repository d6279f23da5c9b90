/**
 * Timing fault rules on records, in-process (`createSandbox().fetch`, docs/sandbox.md,
 * "Timing faults"): reads that lag behind the provider's writes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { paymentBody, transferBody, uniqueRef } from '../../support/payloads.ts';
import { type InProcess, inProcess } from './timing-helpers.ts';

/** Long enough that the calls made inside the window land in it on a slow machine. */
const WINDOW_MS = 1_500;

let s: InProcess;
afterEach(() => s?.sandbox.close());

const verify = (reference: string) => s.call('GET', `/disbursements/verify/${reference}`);
const initialize = (body: Record<string, unknown>) =>
  s.call('POST', '/disbursements/initialize', body);
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
});
