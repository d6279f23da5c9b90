/**
 * Timing fault rules on requests, in-process (`createSandbox().fetch`, docs/sandbox.md,
 * "Timing faults"): what the caller sees inside the window, what the sandbox holds after
 * it, and that the request log shows each request once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionDroppedError } from '../../../lib/testing/index.ts';
import { transferBody, uniqueRef } from '../../support/payloads.ts';
import { type InProcess, inProcess } from './timing-helpers.ts';

const INIT = 'POST /disbursements/initialize';
/** Long enough that the calls made inside the window land in it on a slow machine. */
const WINDOW_MS = 1_500;
/** How long the `delay` test holds its request, in real milliseconds. */
const HELD_MS = 5_000;

let s: InProcess;
afterEach(() => s?.sandbox.close());

const verify = (reference: string) => s.call('GET', `/disbursements/verify/${reference}`);
const initialize = (body: Record<string, unknown>) =>
  s.call('POST', '/disbursements/initialize', body);
const balance = async () => (await s.control('state')).body.balance as number;

describe('request faults', () => {
  describe('error', () => {
    it('should answer the status for `times` requests, process none of them, then answer normally', async () => {
      s = inProcess();
      const body = transferBody();
      const rule = await s.rule({
        fault: 'error',
        reference: body.reference,
        status: 502,
        times: 2,
      });
      expect(rule).toMatchObject({ fault: 'error', status: 502, times: 2, fired: 0 });
      const opening = await balance();
      for (let i = 0; i < 2; i++) {
        const res = await initialize(body);
        expect(res.status).toBe(502);
        expect(res.body).toMatchObject({ status: 'error', code: 'internal_error' });
      }
      await s.sandbox.idle();
      expect((await verify(String(body.reference))).status).toBe(404);
      expect(await balance()).toBe(opening);
      expect((await initialize(body)).status).toBe(200);
      const log = await s.requestsFor(String(body.reference));
      expect(log.map((entry) => entry.status)).toEqual([502, 502, 404, 200]);
      expect(log[0].fault).toEqual({ rule: rule.id, fault: 'error' });
      const rules = (await s.control('faults/rules')).body.data;
      expect(rules).toEqual([expect.objectContaining({ id: rule.id, fired: 2 })]);
    });

    it('should answer reads and unsigned requests too, like an outage', async () => {
      s = inProcess();
      const reference = uniqueRef('tr');
      await s.rule({ fault: 'error', reference, times: 2 });
      expect((await verify(reference)).status).toBe(503);
      const unsigned = await s.sandbox.fetch(
        new Request(`http://sandbox.test/disbursements/verify/${reference}`),
      );
      expect(unsigned.status).toBe(503);
      expect((await verify(reference)).status).toBe(404);
    });

    it('should act on every request of a route when the rule names only the route', async () => {
      s = inProcess();
      await s.rule({ fault: 'error', route: INIT, times: 2 });
      expect((await initialize(transferBody())).status).toBe(503);
      expect((await s.call('GET', '/banks')).status).toBe(200);
      expect((await initialize(transferBody())).status).toBe(503);
      expect((await initialize(transferBody())).status).toBe(200);
    });
  });

  describe('error_then_commit', () => {
    it('should answer 503 at once and commit after_ms later, logging the request once', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      const rule = await s.rule({ fault: 'error_then_commit', reference, after_ms: WINDOW_MS });
      const opening = await balance();
      const res = await initialize(body);
      expect(res.status).toBe(503);
      // Inside the window: the provider has not committed yet.
      expect((await verify(reference)).status).toBe(404);
      expect(await balance()).toBe(opening);
      const [pending] = await s.requestsFor(reference);
      expect(pending.fault).toEqual({
        rule: rule.id,
        fault: 'error_then_commit',
        commit_status: null,
        committed_at: null,
      });
      await s.sandbox.idle();
      const found = await verify(reference);
      expect(found.status).toBe(200);
      expect(found.body.data).toMatchObject({ reference, transfer_status: 'processing' });
      expect(await balance()).toBeLessThan(opening);
      // Once committed a resend is a duplicate.
      const resend = await initialize(body);
      expect(resend.status).toBe(409);
      expect(resend.body.code).toBe('duplicate_reference');
      const posts = (await s.requestsFor(reference)).filter((entry) => entry.method === 'POST');
      expect(posts.map((entry) => entry.status)).toEqual([503, 409]);
      expect(posts[0].fault).toMatchObject({
        commit_status: 200,
        committed_at: expect.any(String),
      });
    });

    it('should let a resend inside the window create the record and refuse the late commit', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      await s.rule({ fault: 'error_then_commit', reference, after_ms: WINDOW_MS });
      const opening = await balance();
      expect((await initialize(body)).status).toBe(503);
      expect((await initialize(body)).status).toBe(200);
      const afterResend = await balance();
      await s.sandbox.idle();
      // The original commits late and finds the reference taken: money moved once.
      expect(await balance()).toBe(afterResend);
      expect(afterResend).toBeLessThan(opening);
      const posts = (await s.requestsFor(reference)).filter((entry) => entry.method === 'POST');
      expect(posts.map((entry) => entry.status)).toEqual([503, 200]);
      expect(posts[0].fault.commit_status).toBe(409);
    });

    it('should check the signature on arrival and not commit a refused request', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      // Limited to the POST: the verify below names the reference too.
      await s.rule({ fault: 'error_then_commit', reference, route: INIT, after_ms: 0 });
      const res = await s.sandbox.fetch(
        new Request('http://sandbox.test/disbursements/initialize', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      expect(res.status).toBe(401);
      await s.sandbox.idle();
      expect((await verify(reference)).status).toBe(404);
      // The rule is still waiting for a request it can act on.
      expect((await initialize(body)).status).toBe(503);
    });

    it('should never commit once the sandbox is reset inside the window', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      await s.rule({ fault: 'error_then_commit', reference, after_ms: WINDOW_MS });
      expect((await initialize(body)).status).toBe(503);
      expect((await s.control('reset', {})).status).toBe(200);
      await s.sandbox.idle();
      expect((await verify(reference)).status).toBe(404);
      expect((await s.control('state')).body.counts.transfers).toBe(0);
    });
  });

  describe('drop_then_commit', () => {
    it('should drop the connection, log the request once with status null, and commit later', async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      await s.rule({ fault: 'drop_then_commit', reference, after_ms: WINDOW_MS });
      await expect(initialize(body)).rejects.toBeInstanceOf(ConnectionDroppedError);
      expect((await verify(reference)).status).toBe(404);
      await s.sandbox.idle();
      expect((await verify(reference)).status).toBe(200);
      const posts = (await s.requestsFor(reference)).filter((entry) => entry.method === 'POST');
      expect(posts).toHaveLength(1);
      expect(posts[0]).toMatchObject({ status: null, fault: { commit_status: 200 } });
    });
  });

  describe('delay', () => {
    it('should hold the request after_ms, then process and answer it', {
      timeout: 20_000,
    }, async () => {
      s = inProcess();
      const body = transferBody();
      const reference = String(body.reference);
      // Limited to the POST: the verify sent while it is held names the reference too. A
      // longer hold than the other windows: the three checks made while it is held must
      // not be outrun by the timer on a loaded machine.
      await s.rule({ fault: 'delay', reference, route: INIT, after_ms: HELD_MS });
      let answered = false;
      const held = initialize(body).then((res) => {
        answered = true;
        return res;
      });
      // The POST is signed and sent concurrently with the checks below: let it reach the
      // sandbox (its hold is a pending timer) before looking, or a fast verify can overtake it.
      await heldBySandbox();
      // While it is held nothing is committed and no response has come.
      expect((await verify(reference)).status).toBe(404);
      expect(answered).toBe(false);
      expect((await s.control('state')).body.counts.pending_timers).toBe(1);
      expect((await held).status).toBe(200);
      expect((await verify(reference)).status).toBe(200);
      const posts = (await s.requestsFor(reference)).filter((entry) => entry.method === 'POST');
      expect(posts).toEqual([
        expect.objectContaining({
          status: 200,
          fault: expect.objectContaining({ fault: 'delay' }),
        }),
      ]);
    });

    // Waits (at most 5 s, in 10 ms steps) until the sandbox holds a request on a timer.
    async function heldBySandbox(): Promise<void> {
      for (let step = 0; step < 500; step += 1) {
        if ((await s.control('state')).body.counts.pending_timers > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  });

  describe('rules and the existing controls', () => {
    it('should clear every rule with POST /__sandbox/faults {} and keep them on other bodies', async () => {
      s = inProcess();
      const reference = uniqueRef('tr');
      await s.rule({ fault: 'error', reference, times: 5 });
      expect((await s.control('faults', { variant: 'flat' })).status).toBe(200);
      expect((await s.control('faults/rules')).body.data).toHaveLength(1);
      expect((await s.control('faults', {})).status).toBe(200);
      expect((await s.control('faults/rules')).body.data).toEqual([]);
      expect((await verify(reference)).status).toBe(404);
    });

    it('should act with the first matching rule only, in the order added', async () => {
      s = inProcess();
      const body = transferBody();
      await s.rule({ fault: 'error', reference: body.reference, status: 500 });
      await s.rule({ fault: 'error', route: INIT, status: 504 });
      expect((await initialize(body)).status).toBe(500);
      expect((await initialize(body)).status).toBe(504);
      expect((await initialize(body)).status).toBe(200);
    });

    it.each([
      ['no target', { fault: 'error' }, 'reference'],
      ['an unknown fault', { fault: 'explode', reference: 'r' }, 'fault'],
      ['an unknown route', { fault: 'error', route: 'POST /nowhere' }, 'route'],
      [
        'a route without its method',
        { fault: 'error', route: '/disbursements/initialize' },
        'route',
      ],
      ['a status below 500', { fault: 'error', reference: 'r', status: 404 }, 'status'],
      ['a status on delay', { fault: 'delay', reference: 'r', status: 503, after_ms: 1 }, 'status'],
      ['after_ms on error', { fault: 'error', reference: 'r', after_ms: 1 }, 'after_ms'],
      ['no after_ms on delay', { fault: 'delay', reference: 'r' }, 'after_ms'],
      [
        'after_ms over ten minutes',
        { fault: 'delay', reference: 'r', after_ms: 600_001 },
        'after_ms',
      ],
      ['a fractional after_ms', { fault: 'delay', reference: 'r', after_ms: 1.5 }, 'after_ms'],
      ['times 0', { fault: 'error', reference: 'r', times: 0 }, 'times'],
      [
        'times on a record fault',
        { fault: 'visible_after', reference: 'r', after_ms: 1, times: 2 },
        'times',
      ],
      [
        'a record fault on a read route',
        { fault: 'visible_after', route: 'GET /disbursements/verify/:reference', after_ms: 1 },
        'route',
      ],
      [
        'final_after on payments',
        { fault: 'final_after', route: 'POST /payments/initialize', after_ms: 1 },
        'route',
      ],
      ['an unknown field', { fault: 'error', reference: 'r', afterMs: 1 }, 'afterMs'],
    ])('should refuse %s with 400 naming the field', async (_label, rule, field) => {
      s = inProcess();
      const res = await s.control('faults/rules', rule);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.issues.map((issue: { path: string }) => issue.path)).toContain(field);
      expect((await s.control('faults/rules')).body.data).toEqual([]);
    });
  });
});
