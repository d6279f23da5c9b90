/**
 * A resend refused as a duplicate reference after an ambiguous response: the first request
 * did land, so the refusal is never the key's response. The gateway looks the record up
 * again and answers it (`Idempotent-Recovered: true`), or, while the payment service's
 * reads still lag, keeps the claim locked for another settle window. The sandbox's fault
 * rules play the timings (one reference per test); every try goes under one request id.
 */
import { describe, expect, it } from 'vitest';
import {
  addSandboxFault,
  retriedRequest,
  sentStatuses,
  sleep,
  upstreamCalls,
} from '../fault-bindings.ts';
import { CALLER_NAME, errorBody, useCapturedLogs } from '../helpers.ts';
import { findIdempotencyKey } from '../idempotency-keys.ts';

const logs = useCapturedLogs();

const TRANSFER_ROUTE = 'POST /disbursements/initialize';
// A 1 s upstream timeout, so a 1 s settle window; a 2 s lock.
const SETTLE = { UPSTREAM_TIMEOUT_MS: '1000', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '2' };
const SETTLE_MS = 1000;

describe('resend refused as a duplicate reference', () => {
  it('should look the record up again and answer it recovered, storing that answer', async () => {
    const transfer = retriedRequest();
    const reference = String(transfer.body.reference);
    // Answered 503 at once, committed 1.3 s later: after the settle window.
    await addSandboxFault({
      fault: 'error_then_commit',
      reference,
      route: TRANSFER_ROUTE,
      after_ms: 1300,
    });
    expect((await transfer.send(SETTLE)).status).toBe(503);
    // The resend is held 500 ms on its way, so it arrives after the commit.
    await addSandboxFault({ fault: 'delay', reference, route: TRANSFER_ROUTE, after_ms: 500 });
    await sleep(SETTLE_MS + 100);
    const recovered = await transfer.send(SETTLE);
    expect(recovered.status).toBe(200);
    expect(recovered.headers.get('Idempotent-Recovered')).toBe('true');
    const text = await recovered.text();
    expect(JSON.parse(text)).toMatchObject({
      status: 'success',
      data: { reference, amount: 7.25, currency: 'NGN', destination_bank_account: '0123456789' },
    });
    expect(await upstreamCalls(transfer.requestId)).toEqual([
      transfer.sent,
      transfer.lookup,
      transfer.sent,
      transfer.lookup,
    ]);
    expect(await sentStatuses(transfer.requestId)).toEqual([503, 409]);
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({ event: 'idempotency_resend_refused', record_found: true }),
    );
    const replay = await transfer.send(SETTLE);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await replay.text()).toBe(text);
  });

  it('should answer 409 in flight and store nothing while the record is not readable, then recover it', async () => {
    const transfer = retriedRequest();
    const reference = String(transfer.body.reference);
    // Committed at once behind a 503, and unreadable for 1.8 s: a lagging read replica.
    await addSandboxFault({
      fault: 'error_then_commit',
      reference,
      route: TRANSFER_ROUTE,
      after_ms: 0,
    });
    await addSandboxFault({ fault: 'visible_after', reference, after_ms: 1800 });
    expect((await transfer.send(SETTLE)).status).toBe(503);
    await sleep(SETTLE_MS + 100);
    const refused = await transfer.send(SETTLE);
    expect(refused.status).toBe(409);
    expect(refused.headers.get('Retry-After')).toBe('1');
    expect(await errorBody(refused)).toMatchObject({ code: 'idempotency_key_in_flight' });
    const record = await findIdempotencyKey(CALLER_NAME, transfer.key);
    expect(record?.state).toBe('in_flight');
    expect(record?.response).toBeUndefined();
    expect(record?.lockedUntil).toBeGreaterThan(Date.now() + SETTLE_MS / 2);
    // Inside the new window: refused without reaching the payment service.
    const early = await transfer.send(SETTLE);
    expect(early.status).toBe(409);
    expect(await sentStatuses(transfer.requestId)).toEqual([503, 409]);
    await sleep(SETTLE_MS + 100);
    const healed = await transfer.send(SETTLE);
    expect(healed.status).toBe(200);
    expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
    expect(await healed.json()).toMatchObject({ data: { reference, amount: 7.25 } });
    expect(await upstreamCalls(transfer.requestId)).toEqual([
      transfer.sent,
      transfer.lookup,
      transfer.sent,
      transfer.lookup,
      transfer.lookup,
    ]);
    expect(await sentStatuses(transfer.requestId)).toEqual([503, 409]);
  });

  it("should answer 409 idempotency_record_mismatch when the reference holds another request's money", async () => {
    const transfer = retriedRequest();
    const reference = String(transfer.body.reference);
    const other = retriedRequest('/disbursements/initialize', {
      ...transfer.body,
      amount: 500,
    });
    // This request's first try fails before processing; meanwhile another request takes
    // the reference for 500.00, committed while this resend is held on its way.
    await addSandboxFault({ fault: 'error', reference, route: TRANSFER_ROUTE });
    expect((await transfer.send(SETTLE)).status).toBe(503);
    await sleep(SETTLE_MS + 100);
    // Held long enough that the other request, sent 150 ms later, commits first on a loaded
    // machine; the resend's own upstream timeout outlasts the hold.
    await addSandboxFault({ fault: 'delay', reference, route: TRANSFER_ROUTE, after_ms: 2_000 });
    const [resend] = await Promise.all([
      transfer.send({ ...SETTLE, UPSTREAM_TIMEOUT_MS: '5000' }),
      sleep(150).then(() => other.send(SETTLE)),
    ]);
    expect(resend.status).toBe(409);
    expect((await errorBody(resend)).code).toBe('idempotency_record_mismatch');
    expect((await findIdempotencyKey(CALLER_NAME, transfer.key))?.response).toBeUndefined();
    expect(await sentStatuses(transfer.requestId)).toEqual([503, 409]);
  });
});
