/**
 * The proxy when the upstream fails mid-exchange: the connection closing in the middle
 * of the body, a response after `UPSTREAM_TIMEOUT_MS`, a 5xx then a success (a money POST's
 * retry inside the settle window after such a response is 409 in flight). The faults
 * sit between the real Worker and the real sandbox (`faultyUpstream`), keyed by request
 * id, so no other test file sees them (the fault sandbox's faults are global, and
 * test/worker/upstream/upstream.test.ts drives it). One request id per test, reused on retries:
 * the sandbox's log under it is everything the upstream saw.
 */
import { describe, expect, it } from 'vitest';
import {
  faultyUpstream,
  type RetriedRequest,
  retriedRequest,
  sleep,
  upstreamCalls,
} from '../fault-bindings.ts';
import {
  errorBody,
  fetchGateway,
  gatewayRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

useCapturedLogs();

const TRANSFER = '/disbursements/initialize';
// A read the gateway never caches, so every try reaches the sandbox.
const COUNTS = '/refunds/count-by-status';
const POST_TRANSFER = { method: 'POST', path: TRANSFER } as const;
// 1 s lock (the larger of the lock timeout and twice the upstream timeout), 500 ms timeout,
// so a 500 ms settle window after an ambiguous response.
const SHORT = { IDEMPOTENCY_LOCK_TIMEOUT_SEC: '1', UPSTREAM_TIMEOUT_MS: '500' };
const SETTLE_MS = 500;

/** A retry inside the settle window: 409 in flight, told to come back in a second. */
async function expectSettling(res: Response): Promise<void> {
  expect(res.status).toBe(409);
  expect(res.headers.get('Retry-After')).toBe('1');
  expect((await errorBody(res)).code).toBe('idempotency_key_in_flight');
}

/** Sends `request` again once the settle window of its ambiguous response is over. */
function afterSettleWindow(request: RetriedRequest): Promise<Response> {
  return sleep(SETTLE_MS + 100).then(() => request.send(SHORT));
}

describe('proxy under upstream faults', () => {
  describe('connection closed mid-body', () => {
    it('should answer 502 upstream_unreachable for a POST and recover its landed record on retry, sending it once', async () => {
      const upstream = faultyUpstream();
      const transfer = retriedRequest();
      const id = transfer.requestId;
      upstream.inject(id, { kind: 'cut-body', afterBytes: 10 }, POST_TRANSFER);
      const first = await transfer.send(SHORT);
      expect(upstream.injected).toBe(1);
      expect(first.status).toBe(502);
      expect(await errorBody(first)).toMatchObject({
        code: 'upstream_unreachable',
        request_id: id,
      });
      await expectSettling(await transfer.send(SHORT));
      const retry = await afterSettleWindow(transfer);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await retry.json()).toMatchObject({ data: { reference: transfer.body.reference } });
      expect(await upstreamCalls(id)).toEqual([transfer.sent, transfer.lookup]);
    });

    it('should answer a GET from its one retry', async () => {
      const upstream = faultyUpstream();
      const id = uniqueRequestId();
      upstream.inject(id, { kind: 'cut-body', afterBytes: 5 });
      const res = await fetchGateway(gatewayRequest(COUNTS, { requestId: id }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'success' });
      expect(await upstreamCalls(id)).toEqual([`GET ${COUNTS}`, `GET ${COUNTS}`]);
    });
  });

  describe('answer after the timeout', () => {
    it('should answer 504 upstream_timeout and recover the landed record on a retry after the lock, without resending', async () => {
      const upstream = faultyUpstream();
      const transfer = retriedRequest();
      const id = transfer.requestId;
      upstream.inject(id, { kind: 'late', delayMs: 1500 }, POST_TRANSFER);
      const started = Date.now();
      const first = await transfer.send(SHORT);
      expect(first.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(1400);
      expect(await errorBody(first)).toMatchObject({ code: 'upstream_timeout', request_id: id });
      await upstream.settled();
      await sleep(1100);
      const retry = await transfer.send(SHORT);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(id)).toEqual([transfer.sent, transfer.lookup]);
    });

    it('should not resend a POST that timed out while the upstream had yet to process it', async () => {
      const upstream = faultyUpstream();
      const transfer = retriedRequest();
      const id = transfer.requestId;
      // Held up on the way: the upstream gets it 300 ms after the gateway gave up.
      upstream.inject(id, { kind: 'late', delayMs: 800, processedLate: true }, POST_TRANSFER);
      const first = await transfer.send(SHORT);
      expect(first.status).toBe(504);
      // A retry at once must not look the record up before the first send can have landed.
      const early = await transfer.send(SHORT);
      await upstream.settled();
      expect(early.status).toBe(409);
      expect((await errorBody(early)).code).toBe('idempotency_key_in_flight');
      await sleep(1100);
      const healed = await transfer.send(SHORT);
      expect(healed.status).toBe(200);
      expect((await upstreamCalls(id)).filter((call) => call === transfer.sent)).toEqual([
        transfer.sent,
      ]);
    });

    it('should answer 504 for a slow GET without retrying it', async () => {
      const upstream = faultyUpstream();
      const id = uniqueRequestId();
      upstream.inject(id, { kind: 'late', delayMs: 800 });
      const res = await fetchGateway(gatewayRequest(COUNTS, { requestId: id }), {
        UPSTREAM_TIMEOUT_MS: '200',
      });
      expect(res.status).toBe(504);
      expect((await errorBody(res)).code).toBe('upstream_timeout');
      await upstream.settled();
      expect(await upstreamCalls(id)).toEqual([`GET ${COUNTS}`]);
    });
  });

  describe('5xx, then success', () => {
    it('should pass a 503 on with its error body, then send once on the retry with the same key', async () => {
      const upstream = faultyUpstream();
      const transfer = retriedRequest();
      const id = transfer.requestId;
      // Refused before processing: nothing reaches the sandbox.
      upstream.inject(id, { kind: 'status', status: 503, processed: false }, POST_TRANSFER);
      const first = await transfer.send(SHORT);
      expect(first.status).toBe(503);
      expect(await first.json()).toMatchObject({
        status: 'error',
        request_id: id,
        upstream: { status: 503 },
      });
      expect(await sandboxRequests(id)).toEqual([]);
      await expectSettling(await transfer.send(SHORT));
      expect(await sandboxRequests(id)).toEqual([]);
      const retry = await afterSettleWindow(transfer);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('Idempotent-Recovered')).toBeNull();
      expect(await upstreamCalls(id)).toEqual([transfer.lookup, transfer.sent]);
    });

    it('should recover, not resend, when the 5xx came after the upstream processed the POST', async () => {
      const upstream = faultyUpstream();
      const transfer = retriedRequest();
      const id = transfer.requestId;
      upstream.inject(id, { kind: 'status', status: 502, processed: true }, POST_TRANSFER);
      expect((await transfer.send(SHORT)).status).toBe(502);
      await expectSettling(await transfer.send(SHORT));
      const retry = await afterSettleWindow(transfer);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('Idempotent-Recovered')).toBe('true');
      expect(await upstreamCalls(id)).toEqual([transfer.sent, transfer.lookup]);
    });

    it('should answer a GET 503 as it came and 200 on the caller retry', async () => {
      const upstream = faultyUpstream();
      const id = uniqueRequestId();
      upstream.inject(id, { kind: 'status', status: 503, processed: false });
      const first = await fetchGateway(gatewayRequest(COUNTS, { requestId: id }));
      expect(first.status).toBe(503);
      expect((await errorBody(first)).request_id).toBe(id);
      const retry = await fetchGateway(gatewayRequest(COUNTS, { requestId: id }));
      expect(retry.status).toBe(200);
      expect(await upstreamCalls(id)).toEqual([`GET ${COUNTS}`]);
    });
  });
});
