/**
 * Stale in-flight claims (a worker died), unknown upstream outcomes and expiry, through
 * the real gateway, its real key objects and the real sandbox. A stale claim is written directly in
 * its object with an old lock; what reached the upstream is read back by request id.
 */
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { PaymentsClient } from '../../../lib/index.ts';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import { mandateBody, virtualAccountBody } from '../../support/payloads.ts';
import {
  CALLER_NAME,
  type CapturedLogs,
  captureLogs,
  createAtSandbox,
  errorBody,
  fetchGateway,
  postJson,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';
import { execOnKey, findIdempotencyKey, putIdempotencyKey } from '../idempotency-keys.ts';

let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TRANSFER = '/disbursements/initialize';
// Nothing listens there: the connection is refused (502, outcome unknown to the gateway).
const UNREACHABLE = { UPSTREAM_BASE_URL: 'http://127.0.0.1:9' };

function transferBody(): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: `rec-${crypto.randomUUID()}`,
    amount: 7.25,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  };
}

function keyed(path: string, body: unknown, key: string, requestId: string): Request {
  return postJson(path, body, { requestId, headers: { 'Idempotency-Key': key } });
}

/** Writes an in-flight claim of the test caller whose lock ran out `ageSec` ago. */
async function staleClaim(path: string, body: unknown, key: string, ageSec = 5): Promise<void> {
  const now = Date.now();
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  await putIdempotencyKey({
    caller: CALLER_NAME,
    key,
    fingerprint: await requestFingerprint('POST', path, bytes),
    lockedUntil: now - ageSec * 1000,
    createdAt: now - 60_000 - ageSec * 1000,
    expiresAt: now + 86_400_000,
  });
}

/** A refund request of a fresh paid payment. */
async function refundRequest(): Promise<Record<string, unknown>> {
  const client = new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: inject('sandboxUrl'),
  });
  const { reference } = await client.payments.initialize({
    email: 'buyer@example.com',
    amount: '2500.00',
    currency: 'NGN',
  });
  const paid = await fetch(`${inject('sandboxUrl')}/__sandbox/payments/${reference}/complete`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ outcome: 'success' }),
  });
  expect(paid.status, await paid.text()).toBe(200);
  return {
    payment_reference: reference,
    refund_reference: `rec-rf-${crypto.randomUUID()}`,
    currency: 'NGN',
    amount: 100,
  };
}

/** The keys of a JSON answer, and of its `data` object when it has one. */
function shapeOf(body: Record<string, unknown>): unknown {
  const data = body.data;
  return {
    keys: Object.keys(body).sort(),
    data: typeof data === 'object' && data !== null ? Object.keys(data).sort() : undefined,
  };
}

/** The idempotency outcome of the access log line of `requestId`. */
function loggedOutcome(requestId: string): unknown {
  return logs.lines().find((line) => line.event === 'request' && line.request_id === requestId)
    ?.idempotency;
}

async function reachedUpstream(requestId: string): Promise<string[]> {
  return (await sandboxRequests(requestId)).map((entry) => `${entry.method} ${entry.path}`);
}

describe('idempotency stage', () => {
  describe('stale in-flight claim', () => {
    it('should answer from the upstream record without resending when the request had landed', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      await createAtSandbox(TRANSFER, body);
      await staleClaim(TRANSFER, body, key);
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(TRANSFER, body, key, requestId));
      expect(await reachedUpstream(requestId)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
      ]);
      expect(res.status).toBe(200);
      expect(res.headers.get('Idempotent-Recovered')).toBe('true');
      expect(loggedOutcome(requestId)).toBe('recovered');
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({
        status: 'success',
        data: { reference: body.reference, amount: 7.25 },
      });
      // Stored: the next retry replays the recovered response and reaches nothing.
      const replayId = uniqueRequestId();
      const replay = await fetchGateway(keyed(TRANSFER, body, key, replayId));
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(replay.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await replay.text()).toBe(text);
      expect(await reachedUpstream(replayId)).toEqual([]);
    });

    it("should answer 409 and store nothing when the reference names another request's record", async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      // Another request already used the reference for 500.00 to another account.
      await createAtSandbox(TRANSFER, {
        ...body,
        amount: 500,
        destination_bank_account: '9876543210',
      });
      await staleClaim(TRANSFER, body, key);
      for (const attempt of [1, 2]) {
        const requestId = uniqueRequestId();
        const res = await fetchGateway(keyed(TRANSFER, body, key, requestId));
        expect(res.status, `attempt ${attempt}`).toBe(409);
        expect(res.headers.get('Idempotent-Recovered')).toBeNull();
        const error = await errorBody(res);
        expect(error.code).toBe('idempotency_record_mismatch');
        expect(error.message).toContain('amount, destination_bank_account');
        expect(error.message).not.toMatch(/9876543210/);
        // Looked up, never sent: the 7.25 transfer does not go out under a taken reference.
        expect(await reachedUpstream(requestId)).toEqual([
          `GET /disbursements/verify/${body.reference}`,
        ]);
        const record = await findIdempotencyKey(CALLER_NAME, key);
        expect(record?.state).toBe('in_flight');
        expect(record?.response).toBeUndefined();
      }
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          event: 'idempotency_recovered',
          mismatched_fields: ['amount', 'destination_bank_account'],
        }),
      );
    });

    it.each([
      ['a transfer', TRANSFER, transferBody],
      ['a virtual account', '/virtual-accounts', () => virtualAccountBody()],
      ['a refund', '/refunds/initialize', refundRequest],
    ] as const)("should recover %s in the POST's own answer shape", async (_name, path, build) => {
      const fresh = await build();
      const sent = await fetchGateway(postJson(path, fresh));
      expect(sent.status, await sent.clone().text()).toBe(200);
      const body = await build();
      const key = crypto.randomUUID();
      await createAtSandbox(path, body);
      await staleClaim(path, body, key);
      const res = await fetchGateway(keyed(path, body, key, uniqueRequestId()));
      expect(res.status).toBe(200);
      expect(res.headers.get('Idempotent-Recovered')).toBe('true');
      expect(shapeOf(await res.json())).toEqual(shapeOf(await sent.json()));
    });

    it('should answer 409 for a payment session, whose checkout address no read gives back', async () => {
      const body = {
        email: 'buyer@example.com',
        amount: '2500.00',
        currency: 'NGN',
        reference: `rec-pay-${crypto.randomUUID()}`,
      };
      const key = crypto.randomUUID();
      await createAtSandbox('/payments/initialize', body);
      await staleClaim('/payments/initialize', body, key);
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed('/payments/initialize', body, key, requestId));
      expect(res.status).toBe(409);
      expect(await errorBody(res)).toMatchObject({ code: 'idempotency_answer_lost' });
      expect(await reachedUpstream(requestId)).toEqual([`GET /payments/verify/${body.reference}`]);
      expect((await findIdempotencyKey(CALLER_NAME, key))?.response).toBeUndefined();
    });

    it('should take the claim over and send once when the request never landed', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      await staleClaim(TRANSFER, body, key);
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(TRANSFER, body, key, requestId));
      expect(res.status).toBe(200);
      expect(res.headers.get('Idempotent-Recovered')).toBeNull();
      expect(loggedOutcome(requestId)).toBe('recovered');
      expect(await reachedUpstream(requestId)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
      expect((await findIdempotencyKey(CALLER_NAME, key))?.state).toBe('completed');
      const again = await fetchGateway(keyed(TRANSFER, body, key, requestId));
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(await reachedUpstream(requestId)).toHaveLength(2);
    });

    it('should recover concurrent retries once', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      await staleClaim(TRANSFER, body, key);
      const requestId = uniqueRequestId();
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => fetchGateway(keyed(TRANSFER, body, key, requestId))),
      );
      expect(await reachedUpstream(requestId)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
      expect(responses.filter((res) => res.status === 200).length).toBeGreaterThanOrEqual(1);
      expect(responses.every((res) => res.status === 200 || res.status === 409)).toBe(true);
    });

    it('should keep answering 409 on a money route with no lookup, never resending', async () => {
      const path = '/direct-debits/mandates';
      const body = mandateBody('2031-01-01', '2031-12-31', {
        customer_name: `Ada ${crypto.randomUUID()}`,
      });
      const key = crypto.randomUUID();
      await staleClaim(path, body, key);
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(path, body, key, requestId));
      expect(res.status).toBe(409);
      expect(res.headers.get('Retry-After')).toBe('60');
      expect(await errorBody(res)).toMatchObject({ code: 'idempotency_key_in_flight' });
      expect(await reachedUpstream(requestId)).toEqual([]);
    });

    it('should answer 409 and keep the claim stale when the lookup fails', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      await staleClaim(TRANSFER, body, key);
      const failed = await fetchGateway(keyed(TRANSFER, body, key, uniqueRequestId()), UNREACHABLE);
      expect(failed.status).toBe(409);
      expect(failed.headers.get('Retry-After')).toBe('1');
      expect((await errorBody(failed)).message).toMatch(/could not be verified/);
      const record = await findIdempotencyKey(CALLER_NAME, key);
      expect(record?.state).toBe('in_flight');
      expect(record?.lockedUntil).toBeLessThanOrEqual(Date.now());
      expect((await fetchGateway(keyed(TRANSFER, body, key, uniqueRequestId()))).status).toBe(200);
    });

    it('should not recover before the lock times out', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      await staleClaim(TRANSFER, body, key, -30);
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(TRANSFER, body, key, requestId));
      expect(res.status).toBe(409);
      expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(29);
      expect(Number(res.headers.get('Retry-After'))).toBeLessThanOrEqual(30);
      expect(await reachedUpstream(requestId)).toEqual([]);
    });
  });

  describe('unknown upstream outcome', () => {
    it('should keep the claim after a 502 and verify before resending on retry', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      // A 500 ms upstream timeout: the settle window after the 502 is 500 ms.
      const short = { UPSTREAM_TIMEOUT_MS: '500', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '1' };
      const failed = await fetchGateway(keyed(TRANSFER, body, key, uniqueRequestId()), {
        ...UNREACHABLE,
        ...short,
      });
      expect(failed.status).toBe(502);
      expect((await findIdempotencyKey(CALLER_NAME, key))?.state).toBe('in_flight');
      const earlyId = uniqueRequestId();
      const early = await fetchGateway(keyed(TRANSFER, body, key, earlyId), short);
      expect(early.status).toBe(409);
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      expect(await reachedUpstream(earlyId)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const requestId = uniqueRequestId();
      const retry = await fetchGateway(keyed(TRANSFER, body, key, requestId), short);
      expect(retry.status).toBe(200);
      expect(await reachedUpstream(requestId)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
    });

    it('should release the key when the upstream refused the credentials (401), so the fix is sent', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const requestId = uniqueRequestId();
      const refused = await fetchGateway(keyed(TRANSFER, body, key, requestId), {
        UPSTREAM_SECRET: 'a-wrong-secret',
      });
      expect(refused.status).toBe(401);
      expect(await findIdempotencyKey(CALLER_NAME, key)).toBeUndefined();
      const fixed = await fetchGateway(keyed(TRANSFER, body, key, requestId));
      expect(fixed.status).toBe(200);
      expect(fixed.headers.get('Idempotent-Replayed')).toBeNull();
      expect(await reachedUpstream(requestId)).toEqual([`POST ${TRANSFER}`, `POST ${TRANSFER}`]);
      expect((await findIdempotencyKey(CALLER_NAME, key))?.state).toBe('completed');
    });

    it('should store a definitive 4xx and replay it', async () => {
      const body = { ...transferBody(), currency: 'XYZ' };
      const key = crypto.randomUUID();
      const first = await fetchGateway(keyed(TRANSFER, body, key, uniqueRequestId()));
      expect(first.status).toBeGreaterThanOrEqual(400);
      expect(first.status).toBeLessThan(500);
      expect([401, 403, 408, 429]).not.toContain(first.status);
      const replay = await fetchGateway(keyed(TRANSFER, body, key, uniqueRequestId()));
      expect(replay.status).toBe(first.status);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    });
  });

  describe('expiry', () => {
    it('should treat a key past its retention as absent', async () => {
      const key = crypto.randomUUID();
      const first = await fetchGateway(keyed(TRANSFER, transferBody(), key, uniqueRequestId()));
      expect(first.status).toBe(200);
      await execOnKey(
        CALLER_NAME,
        key,
        'UPDATE idempotency_keys SET expires_at = ?3 WHERE caller = ?1 AND idempotency_key = ?2',
        CALLER_NAME,
        key,
        Date.now() - 1,
      );
      // Another body under the same key: a live key would answer 422.
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(TRANSFER, transferBody(), key, requestId));
      expect(res.status).toBe(200);
      expect(res.headers.get('Idempotent-Replayed')).toBeNull();
      expect(await reachedUpstream(requestId)).toEqual([`POST ${TRANSFER}`]);
    });
  });
});
