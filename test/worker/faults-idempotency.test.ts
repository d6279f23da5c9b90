/**
 * The idempotency stage when D1 fails at each of its writes: the claim, the stored
 * answer, the release and the expiry of the lock. The real Worker runs on the real D1
 * wrapped by `faultyD1`; what reached the upstream is read back from the sandbox by
 * request id (one id per test, reused on every retry, so the list is the whole story).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findIdempotencyKey } from '../../worker/db/idempotency-keys.ts';
import { requestFingerprint } from '../../worker/proxy/stages/idempotency.ts';
import {
  faultyD1,
  faultyUpstream,
  keyedPost,
  sleep,
  transferBody,
  upstreamCalls,
} from './fault-bindings.ts';
import { CALLER_NAME, errorBody, fetchGateway, uniqueRequestId, useCapturedLogs } from './helpers.ts';

const logs = useCapturedLogs();

const TRANSFER = '/disbursements/initialize';
const MANDATES = '/direct-debits/mandates';

// A lock of 1 s (the larger of the lock timeout and twice the upstream timeout), so a test
// can wait for a claim to go stale instead of editing D1.
const SHORT_LOCK = { IDEMPOTENCY_LOCK_TIMEOUT_SEC: '1', UPSTREAM_TIMEOUT_MS: '500' };
const LOCK_MS = 1000;

// The statements of worker/db/idempotency-keys.ts, by what they do.
const CLAIM_INSERT = /^\s*INSERT INTO idempotency_keys/;
const TAKE_OVER = /SET locked_until = \?4[\s\S]*locked_until <= \?3/;
const COMPLETE = /SET state = 'completed'/;
const RELEASE = /^DELETE FROM idempotency_keys WHERE [\s\S]*locked_until = \?3/;
const EXPIRE = /^UPDATE idempotency_keys SET locked_until = \?4 WHERE [\s\S]*locked_until = \?3/;

function mandateBody(): Record<string, unknown> {
  return {
    customer_name: `Ada ${crypto.randomUUID()}`,
    customer_email: 'ada@example.com',
    account_number: '0123456789',
    bank_code: '058',
    start_date: '2031-01-01',
    end_date: '2031-12-31',
    monthly_amount: 10000,
    monthly_debit_count: 3,
  };
}

async function stateOf(key: string): Promise<string | undefined> {
  return (await findIdempotencyKey(env.DB, CALLER_NAME, key))?.state;
}

/** The log line of the D1 write the stage gave up on (it answers anyway). */
function writeFailures(): Record<string, unknown>[] {
  return logs.lines().filter((line) => line.event === 'idempotency_write_failed');
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

describe('idempotency stage under D1 faults', () => {
  describe('claim', () => {
    it('should answer 500 internal_error and send nothing when the claim fails, then run once on retry', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const db = faultyD1(env.DB, { failOn: CLAIM_INSERT });
      await expectInternalError(await fetchGateway(keyedPost(TRANSFER, body, key, id), { DB: db }), id);
      expect(db.injected).toBe(1);
      expect(await stateOf(key)).toBeUndefined();
      expect(await upstreamCalls(id)).toEqual([]);
      const retry = await fetchGateway(keyedPost(TRANSFER, body, key, id));
      expect(retry.status).toBe(200);
      expect(await upstreamCalls(id)).toEqual([`POST ${TRANSFER}`]);
      expect(await stateOf(key)).toBe('completed');
    });

    it('should hold a claim committed before D1 failed (the Worker abandoned it before forwarding), then send once after the lock', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const db = faultyD1(env.DB, { failOn: CLAIM_INSERT, when: 'after' });
      const first = await fetchGateway(keyedPost(TRANSFER, body, key, id), {
        DB: db,
        ...SHORT_LOCK,
      });
      await expectInternalError(first, id);
      expect(await stateOf(key)).toBe('in_flight');
      const early = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(early.status).toBe(409);
      expect(early.headers.get('Retry-After')).toBe('1');
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      expect(await upstreamCalls(id)).toEqual([]);
      await sleep(LOCK_MS + 100);
      const healed = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(healed.status).toBe(200);
      expect(await upstreamCalls(id)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
    });

    it('should answer 500 and resend nothing when taking over a stale claim fails, then recover on retry', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const now = Date.now();
      // A claim whose Worker died before forwarding: in flight, lock run out.
      await env.DB.prepare(
        `INSERT INTO idempotency_keys
           (caller, idempotency_key, fingerprint, state, locked_until, created_at, expires_at)
         VALUES (?1, ?2, ?3, 'in_flight', ?4, ?4, ?5)`,
      )
        .bind(
          CALLER_NAME,
          key,
          await requestFingerprint('POST', TRANSFER, new TextEncoder().encode(JSON.stringify(body))),
          now - 5000,
          now + 86_400_000,
        )
        .run();
      const db = faultyD1(env.DB, { failOn: TAKE_OVER });
      await expectInternalError(await fetchGateway(keyedPost(TRANSFER, body, key, id), { DB: db }), id);
      expect(db.injected).toBe(1);
      expect(await upstreamCalls(id)).toEqual([]);
      const healed = await fetchGateway(keyedPost(TRANSFER, body, key, id));
      expect(healed.status).toBe(200);
      expect(await upstreamCalls(id)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
    });
  });

  describe('completion', () => {
    it('should still answer when storing the answer fails, and recover on retry without resending', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const db = faultyD1(env.DB, { failOn: COMPLETE });
      const first = await fetchGateway(keyedPost(TRANSFER, body, key, id), {
        DB: db,
        ...SHORT_LOCK,
      });
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({ data: { reference: body.reference } });
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      expect(await stateOf(key)).toBe('in_flight');
      const early = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(early.status).toBe(409);
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      await sleep(LOCK_MS + 100);
      const healed = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await healed.json()).toMatchObject({ data: { reference: body.reference } });
      expect(await upstreamCalls(id)).toEqual([
        `POST ${TRANSFER}`,
        `GET /disbursements/verify/${body.reference}`,
      ]);
      expect(await stateOf(key)).toBe('completed');
    });

    it('should answer 409 and never resend on a route with no lookup when storing the answer failed', async () => {
      const body = mandateBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const db = faultyD1(env.DB, { failOn: COMPLETE });
      const first = await fetchGateway(keyedPost(MANDATES, body, key, id), {
        DB: db,
        ...SHORT_LOCK,
      });
      expect(first.status).toBe(200);
      await sleep(LOCK_MS + 100);
      const retry = await fetchGateway(keyedPost(MANDATES, body, key, id), SHORT_LOCK);
      expect(retry.status).toBe(409);
      expect(retry.headers.get('Retry-After')).not.toBeNull();
      expect(await errorBody(retry)).toMatchObject({
        code: 'idempotency_key_in_flight',
        message: expect.stringMatching(/cannot be verified/),
      });
      expect(await upstreamCalls(id)).toEqual([`POST ${MANDATES}`]);
    });
  });

  describe('release and expiry', () => {
    it('should answer 500 and keep the key when releasing it fails, then send once after the lock', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      const db = faultyD1(env.DB, { failOn: RELEASE });
      // No signing secret: the gateway fails before sending, so the key is to be released.
      const first = await fetchGateway(keyedPost(TRANSFER, body, key, id), {
        DB: db,
        UPSTREAM_SECRET: '',
        ...SHORT_LOCK,
      });
      await expectInternalError(first, id);
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      expect(await stateOf(key)).toBe('in_flight');
      await sleep(LOCK_MS + 100);
      const healed = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(healed.status).toBe(200);
      expect(await upstreamCalls(id)).toEqual([
        `GET /disbursements/verify/${body.reference}`,
        `POST ${TRANSFER}`,
      ]);
    });

    it('should pass the upstream 5xx on when expiring the lock fails, and recover without resending once the lock runs out', async () => {
      const body = transferBody();
      const key = crypto.randomUUID();
      const id = uniqueRequestId();
      // The transfer lands, then a 503 comes back: the outcome is unknown to the gateway.
      faultyUpstream().inject(
        id,
        { kind: 'status', status: 503, processed: true },
        { method: 'POST', path: TRANSFER },
      );
      const db = faultyD1(env.DB, { failOn: EXPIRE });
      const first = await fetchGateway(keyedPost(TRANSFER, body, key, id), {
        DB: db,
        ...SHORT_LOCK,
      });
      expect(first.status).toBe(503);
      expect(await errorBody(first)).toMatchObject({ status: 'error', request_id: id });
      expect(db.injected).toBe(1);
      expect(writeFailures()).toHaveLength(1);
      // The lock could not be ended early: the key is in flight until it runs out.
      const early = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(early.status).toBe(409);
      await sleep(LOCK_MS + 100);
      const healed = await fetchGateway(keyedPost(TRANSFER, body, key, id), SHORT_LOCK);
      expect(healed.status).toBe(200);
      expect(healed.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(id)).toEqual([
        `POST ${TRANSFER}`,
        `GET /disbursements/verify/${body.reference}`,
      ]);
    });
  });
});
