/**
 * The idempotency stage when its store fails at each of its writes: the claim, the stored
 * answer, the release and the expiry of the lock. The real Worker runs on the real key
 * objects wrapped by `faultyKeys`; what reached the upstream is read back from the sandbox by
 * request id (one id per test, reused on every retry, so the list is the whole story).
 */
import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import { mandateBody } from '../../support/payloads.ts';
import {
  faultyUpstream,
  type RetriedRequest,
  retriedRequest,
  sleep,
  upstreamCalls,
} from '../fault-bindings.ts';
import { CALLER_NAME, errorBody, useCapturedLogs } from '../helpers.ts';
import { faultyKeys, findIdempotencyKey, putIdempotencyKey } from '../idempotency-keys.ts';

const logs = useCapturedLogs();

const MANDATES = '/direct-debits/mandates';

// A lock of 1 s (the larger of the lock timeout and twice the upstream timeout), so a test
// can wait for a claim to go stale instead of editing its row.
const SHORT_LOCK = { IDEMPOTENCY_LOCK_TIMEOUT_SEC: '1', UPSTREAM_TIMEOUT_MS: '500' };
const LOCK_MS = 1000;

function newMandateBody(): Record<string, unknown> {
  return mandateBody('2031-01-01', '2031-12-31', { customer_name: `Ada ${crypto.randomUUID()}` });
}

async function stateOf(key: string): Promise<string | undefined> {
  return (await findIdempotencyKey(CALLER_NAME, key))?.state;
}

/** The log line of the write the stage gave up on (it answers anyway). */
function writeFailures(): Record<string, unknown>[] {
  return logs.lines().filter((line) => line.event === 'idempotency_write_failed');
}

/** Sends `request` again once its lock has run out (time passing, not its row edited). */
function afterLock(request: RetriedRequest): Promise<Response> {
  return sleep(LOCK_MS + 100).then(() => request.send(SHORT_LOCK));
}

/** A 500 the router rendered: the documented body, never a bare status. */
async function expectInternalError(res: Response, requestId: string): Promise<void> {
  expect(res.status).toBe(500);
  expect(await errorBody(res)).toEqual({
    status: 'error',
    message: 'Internal error',
    code: 'internal_error',
    request_id: requestId,
  });
}

describe('idempotency stage under storage faults', () => {
  describe('claim', () => {
    it('should answer 500 internal_error and send nothing when the claim fails, then run once on retry', async () => {
      const transfer = retriedRequest();
      const db = faultyKeys({ failOn: 'claim' });
      await expectInternalError(await transfer.send({ IDEMPOTENCY_KEYS: db }), transfer.requestId);
      expect(db.injected).toBe(1);
      expect(await stateOf(transfer.key)).toBeUndefined();
      expect(await upstreamCalls(transfer.requestId)).toEqual([]);
      expect((await transfer.send()).status).toBe(200);
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent]);
      expect(await stateOf(transfer.key)).toBe('completed');
    });

    it('should hold a claim committed before its store failed (the Worker abandoned it before forwarding), then send once after the lock', async () => {
      const transfer = retriedRequest();
      const db = faultyKeys({ failOn: 'claim', when: 'after' });
      await expectInternalError(
        await transfer.send({ IDEMPOTENCY_KEYS: db, ...SHORT_LOCK }),
        transfer.requestId,
      );
      expect(await stateOf(transfer.key)).toBe('in_flight');
      const early = await transfer.send(SHORT_LOCK);
      expect(early.status).toBe(409);
      expect(early.headers.get('Retry-After')).toBe('1');
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      expect(await upstreamCalls(transfer.requestId)).toEqual([]);
      expect((await afterLock(transfer)).status).toBe(200);
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.lookup, transfer.sent]);
    });

    it('should answer 500 and resend nothing when taking over a stale claim fails, then recover on retry', async () => {
      const transfer = retriedRequest();
      const now = Date.now();
      const bytes = new TextEncoder().encode(JSON.stringify(transfer.body));
      // A claim whose Worker died before forwarding: in flight, lock run out.
      await putIdempotencyKey({
        caller: CALLER_NAME,
        key: transfer.key,
        fingerprint: await requestFingerprint('POST', '/disbursements/initialize', bytes),
        lockedUntil: now - 5000,
        createdAt: now - 5000,
        expiresAt: now + 86_400_000,
      });
      const db = faultyKeys({ failOn: 'claim' });
      await expectInternalError(await transfer.send({ IDEMPOTENCY_KEYS: db }), transfer.requestId);
      expect(db.injected).toBe(1);
      expect(await upstreamCalls(transfer.requestId)).toEqual([]);
      expect((await transfer.send()).status).toBe(200);
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.lookup, transfer.sent]);
    });
  });

  describe('completion', () => {
    it('should still answer when storing the answer fails, and recover on retry without resending', async () => {
      const transfer = retriedRequest();
      const db = faultyKeys({ failOn: 'complete' });
      const first = await transfer.send({ IDEMPOTENCY_KEYS: db, ...SHORT_LOCK });
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({ data: { reference: transfer.body.reference } });
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      expect(await stateOf(transfer.key)).toBe('in_flight');
      const early = await transfer.send(SHORT_LOCK);
      expect(early.status).toBe(409);
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      const healed = await afterLock(transfer);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await healed.json()).toMatchObject({ data: { reference: transfer.body.reference } });
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
      expect(await stateOf(transfer.key)).toBe('completed');
    });

    it('should answer 409 and never resend on a route with no lookup when storing the answer failed', async () => {
      const mandate = retriedRequest(MANDATES, newMandateBody());
      const db = faultyKeys({ failOn: 'complete' });
      expect((await mandate.send({ IDEMPOTENCY_KEYS: db, ...SHORT_LOCK })).status).toBe(200);
      const retry = await afterLock(mandate);
      expect(retry.status).toBe(409);
      expect(retry.headers.get('Retry-After')).not.toBeNull();
      expect(await errorBody(retry)).toMatchObject({
        code: 'idempotency_key_in_flight',
        message: expect.stringMatching(/cannot be verified/),
      });
      expect(await upstreamCalls(mandate.requestId)).toEqual([mandate.sent]);
    });
  });

  describe('release and expiry', () => {
    it('should pass the refusal on and keep the key when releasing it fails, then send once after the lock', async () => {
      const transfer = retriedRequest();
      const db = faultyKeys({ failOn: 'release' });
      // A wrong signing secret: the upstream refuses (401), so the key is to be released.
      const first = await transfer.send({
        IDEMPOTENCY_KEYS: db,
        UPSTREAM_SECRET: 'a-wrong-secret',
        ...SHORT_LOCK,
      });
      expect(first.status).toBe(401);
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      expect(await stateOf(transfer.key)).toBe('in_flight');
      expect((await afterLock(transfer)).status).toBe(200);
      expect(await upstreamCalls(transfer.requestId)).toEqual([
        transfer.sent,
        transfer.lookup,
        transfer.sent,
      ]);
    });

    it('should pass the upstream 5xx on when expiring the lock fails, and recover without resending once the lock runs out', async () => {
      const transfer = retriedRequest();
      // The transfer lands, then a 503 comes back: the outcome is unknown to the gateway.
      faultyUpstream().inject(
        transfer.requestId,
        { kind: 'status', status: 503, processed: true },
        { method: 'POST' },
      );
      const db = faultyKeys({ failOn: 'lock' });
      const first = await transfer.send({ IDEMPOTENCY_KEYS: db, ...SHORT_LOCK });
      expect(first.status).toBe(503);
      expect(await errorBody(first)).toMatchObject({
        status: 'error',
        request_id: transfer.requestId,
      });
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      // The lock could not be ended early: the key is in flight until it runs out.
      expect((await transfer.send(SHORT_LOCK)).status).toBe(409);
      const healed = await afterLock(transfer);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
    });
  });
});
