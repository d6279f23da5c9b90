/**
 * The settle window of a money POST: after an ambiguous response (an upstream 5xx, a dropped
 * connection, the gateway's own timeout) the idempotency claim stays locked before any
 * lookup may decide to resend, because the payment service can commit the request after
 * it answered. The sandbox plays the timings with its fault rules (one reference per test,
 * so files running at the same time never see each other's); every try is sent under one
 * request id, so the sandbox's log under it is everything the payment service saw.
 */
import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import {
  addSandboxFault,
  faultyUpstream,
  retriedRequest,
  sentStatuses,
  sleep,
  upstreamCalls,
} from '../fault-bindings.ts';
import { CALLER_NAME, errorBody, useCapturedLogs } from '../helpers.ts';
import { findIdempotencyKey, putIdempotencyKey } from '../idempotency-keys.ts';

useCapturedLogs();

const TRANSFER_ROUTE = 'POST /disbursements/initialize';
const VERIFY_ROUTE = 'GET /disbursements/verify/:reference';
// A 1 s upstream timeout, so a 1 s settle window; a 2 s lock (the larger of the lock
// timeout and twice the upstream timeout).
const SETTLE = { UPSTREAM_TIMEOUT_MS: '1000', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '2' };
const SETTLE_MS = 1000;

/** A retry inside the settle window: 409 in flight, told how long is left in seconds. */
async function expectSettling(res: Response, retryAfter = '1'): Promise<void> {
  expect(res.status).toBe(409);
  expect(res.headers.get('Retry-After')).toBe(retryAfter);
  expect((await errorBody(res)).code).toBe('idempotency_key_in_flight');
}

/** Writes an in-flight claim whose lock ran out (the Worker holding it died before forwarding). */
async function staleClaim(key: string, body: unknown): Promise<void> {
  const now = Date.now();
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  await putIdempotencyKey({
    caller: CALLER_NAME,
    key,
    fingerprint: await requestFingerprint('POST', '/disbursements/initialize', bytes),
    lockedUntil: now - 5000,
    createdAt: now - 5000,
    expiresAt: now + 86_400_000,
  });
}

describe('settle window of a money POST', () => {
  describe('upstream 5xx, committed later', () => {
    it.each([502, 503, 504])(
      'should answer a retry at 0.5 s 409 in flight and recover after the window, after a %i committed 700 ms later, sending once',
      async (status) => {
        const transfer = retriedRequest();
        const reference = String(transfer.body.reference);
        await addSandboxFault({
          fault: 'error_then_commit',
          reference,
          route: TRANSFER_ROUTE,
          status,
          after_ms: 700,
        });
        expect((await transfer.send(SETTLE)).status).toBe(status);
        await sleep(500);
        await expectSettling(await transfer.send(SETTLE));
        expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent]);
        await sleep(SETTLE_MS - 500 + 150);
        const healed = await transfer.send(SETTLE);
        expect(healed.status).toBe(200);
        expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
        expect(await healed.json()).toMatchObject({ data: { reference, amount: 7.25 } });
        expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
        expect(await sentStatuses(transfer.requestId)).toEqual([status]);
      },
    );
  });

  describe('connection dropped, committed later', () => {
    it('should answer 502, then 409 in flight at 0.5 s, and recover after the window, sending once', async () => {
      const transfer = retriedRequest();
      const reference = String(transfer.body.reference);
      await addSandboxFault({
        fault: 'drop_then_commit',
        reference,
        route: TRANSFER_ROUTE,
        after_ms: 700,
      });
      const first = await transfer.send(SETTLE);
      expect(first.status).toBe(502);
      expect((await errorBody(first)).code).toBe('upstream_unreachable');
      await sleep(500);
      await expectSettling(await transfer.send(SETTLE));
      await sleep(SETTLE_MS - 500 + 150);
      const healed = await transfer.send(SETTLE);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
    });
  });

  describe("the gateway's own timeout", () => {
    it('should hold the window from the timeout of a resend after a slow lookup, not from the claim', async () => {
      const transfer = retriedRequest();
      const reference = String(transfer.body.reference);
      await staleClaim(transfer.key, transfer.body);
      // Twice the file's timeout, so the slow lookup is 1 s inside it on a loaded machine.
      const slow = { UPSTREAM_TIMEOUT_MS: '2000', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '3' };
      // The lookup answers 404 after 1 s; the resend is committed 3 s after it arrived, long
      // after the gateway gave up at 2 s: 3 s into the run, when the 3 s lock taken at the
      // retry runs out, and the window from the timeout runs 2 s more.
      await addSandboxFault({ fault: 'delay', reference, route: VERIFY_ROUTE, after_ms: 1000 });
      await addSandboxFault({ fault: 'delay', reference, route: TRANSFER_ROUTE, after_ms: 3000 });
      const first = await transfer.send(slow);
      expect(first.status).toBe(504);
      expect((await errorBody(first)).code).toBe('upstream_timeout');
      // Past the lock, before the commit: the lookup would still miss it.
      await sleep(300);
      await expectSettling(await transfer.send(slow), '2');
      await sleep(2000 - 300 + 300);
      const healed = await transfer.send(slow);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(transfer.requestId)).toEqual([
        transfer.lookup,
        transfer.sent,
        transfer.lookup,
      ]);
      expect(await sentStatuses(transfer.requestId)).toEqual([200]);
    });
  });

  describe('not processed', () => {
    it('should send once more after the window when the lookup finds nothing', async () => {
      const transfer = retriedRequest();
      await addSandboxFault({
        fault: 'error',
        reference: String(transfer.body.reference),
        route: TRANSFER_ROUTE,
        status: 503,
      });
      expect((await transfer.send(SETTLE)).status).toBe(503);
      await expectSettling(await transfer.send(SETTLE));
      await sleep(SETTLE_MS + 150);
      const sent = await transfer.send(SETTLE);
      expect(sent.status).toBe(200);
      expect(sent.headers.get('Idempotent-Recovered')).toBeNull();
      expect(await upstreamCalls(transfer.requestId)).toEqual([
        transfer.sent,
        transfer.lookup,
        transfer.sent,
      ]);
      expect(await sentStatuses(transfer.requestId)).toEqual([503, 200]);
      expect((await findIdempotencyKey(CALLER_NAME, transfer.key))?.state).toBe('completed');
    });
  });

  describe('length', () => {
    it('should last UPSTREAM_TIMEOUT_MS by default (30 s)', async () => {
      const transfer = retriedRequest();
      faultyUpstream().inject(
        transfer.requestId,
        { kind: 'status', status: 503, processed: false },
        { method: 'POST' },
      );
      expect((await transfer.send()).status).toBe(503);
      const early = await transfer.send();
      expect(early.status).toBe(409);
      expect(Number(early.headers.get('Retry-After'))).toBeGreaterThanOrEqual(29);
      expect(Number(early.headers.get('Retry-After'))).toBeLessThanOrEqual(30);
      expect(await upstreamCalls(transfer.requestId)).toEqual([]);
    });

    it("should follow the upstream's longer Retry-After", async () => {
      const transfer = retriedRequest();
      faultyUpstream().inject(
        transfer.requestId,
        { kind: 'status', status: 503, processed: true, retryAfter: '2' },
        { method: 'POST' },
      );
      // A 500 ms upstream timeout and a 3 s lock: the window is the 2 s asked for.
      const short = { UPSTREAM_TIMEOUT_MS: '500', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '3' };
      const first = await transfer.send(short);
      expect(first.status).toBe(503);
      expect(first.headers.get('Retry-After')).toBe('2');
      await sleep(1000);
      await expectSettling(await transfer.send(short));
      await sleep(1150);
      const healed = await transfer.send(short);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
    });

    it("should cap the upstream's Retry-After at the claim's lock", async () => {
      const transfer = retriedRequest();
      faultyUpstream().inject(
        transfer.requestId,
        { kind: 'status', status: 503, processed: false, retryAfter: '3600' },
        { method: 'POST' },
      );
      const short = { UPSTREAM_TIMEOUT_MS: '500', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '3' };
      const answered = Date.now();
      expect((await transfer.send(short)).status).toBe(503);
      await expectSettling(await transfer.send(short), '3');
      const record = await findIdempotencyKey(CALLER_NAME, transfer.key);
      expect(record?.lockedUntil).toBeLessThanOrEqual(Date.now() + 3000);
      expect(record?.lockedUntil).toBeGreaterThan(answered + 2000);
    });
  });
});
