/**
 * The storage round trips a caller of the signing proxy waits for, and the guarantees
 * around the stored answer written after the caller has it (in `waitUntil`). The real
 * Worker runs on the real idempotency keys' objects wrapped by `heldKeys` (chosen calls wait
 * at a gate the test opens, or never opens: the isolate died), with an ExecutionContext of
 * the test's own, against the real sandbox; what reached the upstream is read back from its
 * log by request id.
 */
import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import { mandateBody, paymentBody, transferBody } from '../../support/payloads.ts';
import {
  addSandboxFault,
  type RetriedRequest,
  retriedRequest,
  sleep,
  upstreamCalls,
} from '../fault-bindings.ts';
import { CALLER_NAME, errorBody, gatewayRequest, postJson, useCapturedLogs } from '../helpers.ts';
import { findIdempotencyKey, type KeyCall, putIdempotencyKey } from '../idempotency-keys.ts';
import { answeredWhileHeld, heldKeys, startGateway, testContext } from './held-keys.ts';

const logs = useCapturedLogs();

const TRANSFER = '/disbursements/initialize';
const PAYMENTS = '/payments/initialize';
const MANDATES = '/direct-debits/mandates';
// A 2 s lock and a 500 ms upstream timeout: the answer's write may wait for `waitUntil`
// while at least 500 ms of the lock are left, and a test can wait for the lock to run out.
const SHORT_LOCK = { IDEMPOTENCY_LOCK_TIMEOUT_SEC: '2', UPSTREAM_TIMEOUT_MS: '500' };
const LOCK_MS = 2000;
/** The calls the tests hold: the stored answer's write, and the settle window's. */
const COMPLETE = 'complete';
const LOCK = 'lock';

async function stateOf(key: string): Promise<string | undefined> {
  return (await findIdempotencyKey(CALLER_NAME, key))?.state;
}

/** A retry inside the lock: 409 in flight with `Retry-After`, as a request still running gets. */
async function expectInFlight(res: Response): Promise<void> {
  expect(res.status).toBe(409);
  expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
  expect((await errorBody(res)).code).toBe('idempotency_key_in_flight');
}

/**
 * Starts `request` on the real Worker, not waiting for it: its key objects hold the calls
 * named `hold` (`undefined`: none, only the log) and its context keeps or drops what
 * `waitUntil` gets.
 *
 * @returns the held objects (as `db`), the context and the running request.
 */
function startHeld(
  request: Request,
  hold: KeyCall | undefined,
  mode: 'keep' | 'drop' = 'keep',
  overrides: Partial<Env> = {},
) {
  const db = heldKeys(hold);
  const context = testContext(mode);
  return { db, context, running: startGateway(request, db, context, overrides) };
}

/**
 * A retry inside the short lock (409 in flight), then one after it: expected to be answered
 * 200 by the lookup of the record (`Idempotent-Recovered`), and returned.
 */
async function recoveredAfterLock(transfer: RetriedRequest): Promise<Response> {
  await expectInFlight(await transfer.send(SHORT_LOCK));
  await sleep(LOCK_MS + 100);
  const healed = await transfer.send(SHORT_LOCK);
  expect(healed.status).toBe(200);
  expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
  return healed;
}

describe('idempotency stage: storage round trips the caller waits for', () => {
  it('should answer an idempotent POST after one round trip (the claim), storing the answer after, and a GET after none', async () => {
    const transfer = retriedRequest();
    const { db, context, running } = startHeld(start(transfer), COMPLETE);
    expect(await answeredWhileHeld(db, running)).toBe(true);
    db.release('land');
    const first = await running.response;
    await context.settled();
    expect(first.status).toBe(200);
    expect(db.log).toEqual(['claim', 'answer', 'complete']);
    expect(await stateOf(transfer.key)).toBe('completed');

    const reference = String(transfer.body.reference);
    const read = startHeld(gatewayRequest(`/disbursements/verify/${reference}`), undefined);
    expect((await read.running.response).status).toBe(200);
    await read.context.settled();
    expect(read.db.log).toEqual(['answer']);
  });
});

describe('idempotency stage: the stored answer written after the caller has it', () => {
  it('should answer a retry that comes before the write lands 409 in flight, sending nothing, then replay the answer', async () => {
    const transfer = retriedRequest();
    const { db, context, running } = startHeld(start(transfer), COMPLETE);
    expect(await answeredWhileHeld(db, running)).toBe(true);
    const first = await running.response;
    const bytes = await first.text();
    expect(first.status).toBe(200);

    const early = await transfer.send();
    await expectInFlight(early);
    expect(Number(early.headers.get('Retry-After'))).toBeLessThanOrEqual(60);
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent]);

    db.release('land');
    await context.settled();
    const replay = await transfer.send();
    expect(replay.status).toBe(200);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await replay.text()).toBe(bytes);
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent]);
  });

  it('should recover by looking the record up after the lock, never resending, when the isolate dies before the write lands', async () => {
    const transfer = retriedRequest();
    // The write never reaches its object, and the context drops what it was handed.
    const { db, context, running } = startHeld(start(transfer), COMPLETE, 'drop', SHORT_LOCK);
    expect(await answeredWhileHeld(db, running)).toBe(true);
    expect((await running.response).status).toBe(200);
    expect(context.handed()).toBe(1);
    expect(await stateOf(transfer.key)).toBe('in_flight');

    const healed = await recoveredAfterLock(transfer);
    expect(await healed.json()).toMatchObject({ data: { reference: transfer.body.reference } });
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
    expect(await stateOf(transfer.key)).toBe('completed');
  });

  it('should log a write that fails after the answer, and recover as when it never landed', async () => {
    const transfer = retriedRequest();
    const { db, context, running } = startHeld(start(transfer), COMPLETE, 'keep', SHORT_LOCK);
    expect(await answeredWhileHeld(db, running)).toBe(true);
    expect((await running.response).status).toBe(200);
    db.release('fail');
    await context.settled();
    const failures = logs.lines().filter((line) => line.event === 'idempotency_write_failed');
    expect(failures).toEqual([
      expect.objectContaining({
        request_id: transfer.requestId,
        route: 'transfers.initialize',
        error_message: expect.stringMatching(/held complete failed/),
      }),
    ]);
    expect(await stateOf(transfer.key)).toBe('in_flight');

    await recoveredAfterLock(transfer);
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent, transfer.lookup]);
  });
});

describe('idempotency stage: writes the caller still waits for', () => {
  it('should write the settle window before passing an upstream 503 on, so a retry right after it waits for the window', async () => {
    const transfer = retriedRequest();
    await addSandboxFault({
      fault: 'error',
      reference: String(transfer.body.reference),
      route: `POST ${TRANSFER}`,
      status: 503,
    });
    // A 1 s window inside a 3 s lock: a retry told `Retry-After: 1` saw the window written.
    const settle = { UPSTREAM_TIMEOUT_MS: '1000', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '3' };
    const { db, context, running } = startHeld(start(transfer), LOCK, 'keep', settle);
    expect(await answeredWhileHeld(db, running)).toBe(false);
    db.release('land');
    expect((await running.response).status).toBe(503);
    await context.settled();
    expect(context.handed()).toBe(0);
    expect(db.log).toEqual(['claim', 'lock', 'answer']);

    const early = await transfer.send(settle);
    await expectInFlight(early);
    expect(early.headers.get('Retry-After')).toBe('1');
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.sent]);
  });

  it.each([
    ['a payment session, whose checkout address no read gives back', PAYMENTS, paymentBody()],
    ['a mandate, which has nothing to look up', MANDATES, mandateBody('2031-01-01', '2031-12-31')],
    ['a transfer the upstream refused (4xx), which created no record', TRANSFER, refusedTransfer()],
  ])('should wait for the stored answer of %s', async (_, path, body) => {
    const request = retriedRequest(path, body);
    const { db, context, running } = startHeld(start(request, path), COMPLETE);
    expect(await answeredWhileHeld(db, running)).toBe(false);
    db.release('land');
    const res = await running.response;
    expect(res.status).toBeLessThan(500);
    await context.settled();
    expect(context.handed()).toBe(0);
    expect(db.log).toEqual(['claim', 'complete', 'answer']);
    expect(await stateOf(request.key)).toBe('completed');
  });

  it('should wait for the stored answer when less than UPSTREAM_TIMEOUT_MS of the lock is left', async () => {
    const transfer = retriedRequest();
    const reference = String(transfer.body.reference);
    await staleClaim(transfer);
    // A 1 s upstream timeout and a 2 s lock, taken over from a stale claim: the lookup (404)
    // and the resend each answer 0.6 s late, so the answer comes with under 1 s of the lock
    // left. A write still pending when the lock runs out would let a retry take over first.
    for (const route of ['GET /disbursements/verify/:reference', `POST ${TRANSFER}`]) {
      await addSandboxFault({ fault: 'delay', reference, route, after_ms: 600 });
    }
    const slow = { UPSTREAM_TIMEOUT_MS: '1000', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '2' };
    const { db, context, running } = startHeld(start(transfer), COMPLETE, 'keep', slow);
    expect(await answeredWhileHeld(db, running)).toBe(false);
    db.release('land');
    expect((await running.response).status).toBe(200);
    await context.settled();
    expect(db.log).toEqual(['claim', 'complete', 'answer']);
    expect(await upstreamCalls(transfer.requestId)).toEqual([transfer.lookup, transfer.sent]);
  });
});

/** Writes an in-flight claim of `transfer` whose lock ran out (its Worker died before forwarding). */
async function staleClaim(transfer: RetriedRequest): Promise<void> {
  const now = Date.now();
  const bytes = new TextEncoder().encode(JSON.stringify(transfer.body));
  await putIdempotencyKey({
    caller: CALLER_NAME,
    key: transfer.key,
    fingerprint: await requestFingerprint('POST', TRANSFER, bytes),
    lockedUntil: now - 5000,
    createdAt: now - 5000,
    expiresAt: now + 86_400_000,
  });
}

/** A transfer in a currency the payment service refuses (a 4xx). */
function refusedTransfer(): Record<string, unknown> {
  return transferBody({ currency: 'XYZ' });
}

/** The first send of `transfer` to `path`: the same bytes, key and request id as its `send`. */
function start(transfer: RetriedRequest, path = TRANSFER): Request {
  return postJson(path, transfer.body, {
    requestId: transfer.requestId,
    headers: { 'Idempotency-Key': transfer.key },
  });
}
