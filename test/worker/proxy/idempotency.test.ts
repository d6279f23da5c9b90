/**
 * The idempotency stage through the real gateway (workerd), its real key objects and the real sandbox
 * over HTTP: what reached the upstream is read back from the sandbox's request log by
 * request id. Stale claims, upstream failures and expiry: idempotency-recovery.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import {
  CALLER_NAME,
  type CapturedLogs,
  captureLogs,
  errorBody,
  fetchGateway,
  gatewayRequest,
  postJson,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';
import { findIdempotencyKey, hookedKeys, putIdempotencyKey } from '../idempotency-keys.ts';

let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TRANSFER = '/disbursements/initialize';

function transferBody(): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: `idem-${crypto.randomUUID()}`,
    amount: 12.5,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  };
}

/** A JSON POST with an Idempotency-Key (and optionally another caller's token). */
function keyed(
  path: string,
  body: unknown,
  key: string,
  extra: { requestId?: string; token?: string } = {},
) {
  return postJson(path, body, { ...extra, headers: { 'Idempotency-Key': key } });
}

/** A JSON POST without any Idempotency-Key, whatever `postJson` adds by default. */
function unkeyed(path: string, body: unknown, requestId: string): Request {
  return gatewayRequest(path, {
    method: 'POST',
    requestId,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Header names and values, without the per-request id and the replay marker. */
function headersOf(response: Response): [string, string][] {
  return [...response.headers].filter(
    ([name]) => name !== 'x-request-id' && name !== 'idempotent-replayed',
  );
}

/** The idempotency keys' objects, counting the calls made to them. */
function countingKeys(): { keys: Env['IDEMPOTENCY_KEYS']; trips: () => number } {
  let trips = 0;
  const keys = hookedKeys((_call, run) => {
    trips++;
    return run();
  });
  return { keys, trips: () => trips };
}

async function bytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

describe('idempotency stage', () => {
  describe('first use and replay', () => {
    it('should send once and replay the stored answer byte-identically', async () => {
      const key = crypto.randomUUID();
      const body = transferBody();
      const first = await fetchGateway(keyed(TRANSFER, body, key));
      const replayId = uniqueRequestId();
      const replay = await fetchGateway(keyed(TRANSFER, body, key, { requestId: replayId }));
      expect(first.status).toBe(200);
      expect(first.headers.get('Idempotent-Replayed')).toBeNull();
      expect(replay.status).toBe(first.status);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(headersOf(replay)).toEqual(headersOf(first));
      expect(first.headers.get('Content-Type')).toMatch(/^application\/json/);
      const [firstBytes, replayBytes] = [await bytes(first), await bytes(replay)];
      expect(firstBytes.byteLength).toBeGreaterThan(0);
      expect(replayBytes).toEqual(firstBytes);
      expect(await sandboxRequests(replayId)).toEqual([]);
    });

    it('should store and replay an upstream 4xx', async () => {
      const body = transferBody();
      expect((await fetchGateway(keyed(TRANSFER, body, crypto.randomUUID()))).status).toBe(200);
      const key = crypto.randomUUID();
      const duplicate = await fetchGateway(keyed(TRANSFER, body, key));
      const replay = await fetchGateway(keyed(TRANSFER, body, key));
      expect(duplicate.status).toBe(409);
      expect(replay.status).toBe(409);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(headersOf(replay)).toEqual(headersOf(duplicate));
      const text = await duplicate.text();
      expect(JSON.parse(text)).toMatchObject({ code: 'duplicate_reference' });
      expect(await replay.text()).toBe(text);
    });

    it('should record the caller, fingerprint and retention of a stored key', async () => {
      const key = crypto.randomUUID();
      const started = Date.now();
      await fetchGateway(keyed(TRANSFER, transferBody(), key), {
        IDEMPOTENCY_RETENTION_SEC: '120',
      });
      const record = await findIdempotencyKey(CALLER_NAME, key);
      expect(record?.state).toBe('completed');
      expect(record?.fingerprint).toMatch(/^POST \/disbursements\/initialize [0-9a-f]{64}$/);
      expect(record?.expiresAt).toBe((record?.createdAt ?? 0) + 120_000);
      expect(record?.createdAt).toBeGreaterThanOrEqual(started);
      expect(record?.response?.status).toBe(200);
    });

    it('should treat a quoted key (sf-string) as the same key', async () => {
      const key = crypto.randomUUID();
      const body = transferBody();
      await fetchGateway(keyed(TRANSFER, body, key));
      const replay = await fetchGateway(keyed(TRANSFER, body, `"${key}"`));
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    });
  });

  describe('access log', () => {
    it('should record the idempotency outcome of each request', async () => {
      const key = crypto.randomUUID();
      const body = transferBody();
      await fetchGateway(keyed(TRANSFER, body, key));
      await fetchGateway(keyed(TRANSFER, body, key));
      await fetchGateway(keyed(TRANSFER, transferBody(), key));
      await fetchGateway(
        unkeyed('/virtual-accounts/email', { email: 'a@example.com' }, uniqueRequestId()),
      );
      const outcomes = logs
        .lines()
        .filter((line) => line.event === 'request')
        .map((line) => line.idempotency);
      expect(outcomes).toEqual(['stored', 'replayed', 'reused', 'none']);
    });
  });

  describe('storage round trips', () => {
    it('should take 2 on first use and 1 on a replay, a conflict or an in-flight answer', async () => {
      const key = crypto.randomUUID();
      const body = transferBody();
      const trips = async (request: Request): Promise<[number, number]> => {
        const counter = countingKeys();
        const res = await fetchGateway(request, { IDEMPOTENCY_KEYS: counter.keys });
        return [res.status, counter.trips()];
      };
      expect(await trips(keyed(TRANSFER, body, key))).toEqual([200, 2]);
      expect(await trips(keyed(TRANSFER, body, key))).toEqual([200, 1]);
      expect(await trips(keyed(TRANSFER, transferBody(), key))).toEqual([422, 1]);
      const inFlightKey = crypto.randomUUID();
      const blocked = transferBody();
      const now = Date.now();
      await putIdempotencyKey({
        caller: CALLER_NAME,
        key: inFlightKey,
        fingerprint: await requestFingerprint(
          'POST',
          TRANSFER,
          new TextEncoder().encode(JSON.stringify(blocked)),
        ),
        lockedUntil: now + 60_000,
        createdAt: now + 60_000,
        expiresAt: now + 60_000,
      });
      expect(await trips(keyed(TRANSFER, blocked, inFlightKey))).toEqual([409, 1]);
    });
  });

  describe('concurrency', () => {
    it('should send exactly one of 20 concurrent requests with one key upstream', async () => {
      const key = crypto.randomUUID();
      const body = transferBody();
      const requestId = uniqueRequestId();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => fetchGateway(keyed(TRANSFER, body, key, { requestId }))),
      );
      const reached = await sandboxRequests(requestId);
      expect(reached.map((entry) => `${entry.method} ${entry.path}`)).toEqual([`POST ${TRANSFER}`]);
      const fresh = responses.filter(
        (res) => res.status === 200 && !res.headers.has('Idempotent-Replayed'),
      );
      const replayed = responses.filter((res) => res.headers.get('Idempotent-Replayed') === 'true');
      const inFlight = responses.filter((res) => res.status === 409);
      expect(fresh).toHaveLength(1);
      expect(replayed.length + inFlight.length).toBe(19);
      for (const res of inFlight) {
        expect((await errorBody(res)).code).toBe('idempotency_key_in_flight');
        expect(Number(res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers.get('Retry-After'))).toBeLessThanOrEqual(60);
      }
      const text = await fresh[0]?.text();
      for (const res of replayed) expect(await res.text()).toBe(text);
    });
  });

  describe('request errors', () => {
    it('should answer 422 idempotency_key_reused for the same key with another body', async () => {
      const key = crypto.randomUUID();
      await fetchGateway(keyed(TRANSFER, transferBody(), key));
      const requestId = uniqueRequestId();
      const res = await fetchGateway(keyed(TRANSFER, transferBody(), key, { requestId }));
      expect(res.status).toBe(422);
      expect(await errorBody(res)).toMatchObject({
        code: 'idempotency_key_reused',
        status: 'error',
      });
      expect(await sandboxRequests(requestId)).toEqual([]);
    });

    it('should answer 422 for the same key and body on another path', async () => {
      const key = crypto.randomUUID();
      const activate = (mandate: string) =>
        fetchGateway(
          gatewayRequest(`/direct-debits/mandates/${mandate}/initiate-activation`, {
            method: 'POST',
            headers: { 'Idempotency-Key': key },
          }),
        );
      expect((await activate(`m-${crypto.randomUUID()}`)).status).toBe(404);
      const res = await activate(`m-${crypto.randomUUID()}`);
      expect(res.status).toBe(422);
      expect((await errorBody(res)).code).toBe('idempotency_key_reused');
    });

    it('should answer 400 idempotency_key_missing on a money POST without a key', async () => {
      const requestId = uniqueRequestId();
      const res = await fetchGateway(unkeyed(TRANSFER, transferBody(), requestId));
      expect(res.status).toBe(400);
      expect((await errorBody(res)).code).toBe('idempotency_key_missing');
      expect(await sandboxRequests(requestId)).toEqual([]);
    });

    it('should answer 400 validation_failed for a key over 255 characters', async () => {
      const requestId = uniqueRequestId();
      const res = await fetchGateway(
        keyed(TRANSFER, transferBody(), 'k'.repeat(256), { requestId }),
      );
      expect(res.status).toBe(400);
      expect(await errorBody(res)).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: 'Idempotency-Key', message: 'Must be at most 255 characters' }],
      });
      expect(await sandboxRequests(requestId)).toEqual([]);
    });

    it('should accept a key of exactly 255 characters', async () => {
      const key = `${crypto.randomUUID()}${'k'.repeat(219)}`;
      expect(key).toHaveLength(255);
      expect((await fetchGateway(keyed(TRANSFER, transferBody(), key))).status).toBe(200);
    });

    it('should answer 400 validation_failed for an empty or non-printable key', async () => {
      for (const key of ['', '""', 'tab\there']) {
        const res = await fetchGateway(keyed(TRANSFER, transferBody(), key));
        expect(res.status, key).toBe(400);
        expect((await errorBody(res)).issues?.[0]?.path).toBe('Idempotency-Key');
      }
    });
  });

  describe('optional routes', () => {
    const FIND = '/virtual-accounts/email';

    it('should forward every request without a key', async () => {
      const requestId = uniqueRequestId();
      const body = { email: `${crypto.randomUUID()}@example.com` };
      const first = await fetchGateway(unkeyed(FIND, body, requestId));
      const second = await fetchGateway(unkeyed(FIND, body, requestId));
      expect([first.status, second.status]).toEqual([404, 404]);
      expect(second.headers.get('Idempotent-Replayed')).toBeNull();
      expect(await sandboxRequests(requestId)).toHaveLength(2);
    });

    it('should honour a key when one is given', async () => {
      const requestId = uniqueRequestId();
      const key = crypto.randomUUID();
      const body = { email: `${crypto.randomUUID()}@example.com` };
      const first = await fetchGateway(keyed(FIND, body, key, { requestId }));
      const replay = await fetchGateway(keyed(FIND, body, key, { requestId }));
      expect(first.status).toBe(404);
      expect(replay.status).toBe(404);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(await sandboxRequests(requestId)).toHaveLength(1);
    });

    it('should ignore the header on reads', async () => {
      const key = crypto.randomUUID();
      const requestId = uniqueRequestId();
      const read = () =>
        fetchGateway(
          gatewayRequest('/refunds/count-by-status', {
            requestId,
            headers: { 'Idempotency-Key': key },
          }),
        );
      expect((await read()).status).toBe(200);
      const second = await read();
      expect(second.headers.get('Idempotent-Replayed')).toBeNull();
      expect(await sandboxRequests(requestId)).toHaveLength(2);
      expect(await findIdempotencyKey(CALLER_NAME, key)).toBeUndefined();
    });
  });

  describe('callers', () => {
    const CALLERS = JSON.stringify([
      { name: 'alpha', token: 'alpha-token' },
      { name: 'beta', token: 'beta-token' },
    ]);

    it('should scope keys per caller', async () => {
      const key = crypto.randomUUID();
      const requestId = uniqueRequestId();
      const overrides = { GATEWAY_CALLERS: CALLERS };
      const alpha = await fetchGateway(
        keyed(TRANSFER, transferBody(), key, { requestId, token: 'alpha-token' }),
        overrides,
      );
      const beta = await fetchGateway(
        keyed(TRANSFER, transferBody(), key, { requestId, token: 'beta-token' }),
        overrides,
      );
      expect([alpha.status, beta.status]).toEqual([200, 200]);
      expect(beta.headers.get('Idempotent-Replayed')).toBeNull();
      expect(await sandboxRequests(requestId)).toHaveLength(2);
      expect((await findIdempotencyKey('alpha', key))?.state).toBe('completed');
      expect((await findIdempotencyKey('beta', key))?.state).toBe('completed');
    });
  });
});
