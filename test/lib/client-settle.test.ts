// The settle window of direct mode against the sandbox over real HTTP: its fault rules
// play a provider that commits a transfer after the client gave up on it (a timeout, a
// dropped connection, a 503), or whose reads lag its writes. What reached the sandbox is
// read from its request log, so each test counts the POSTs the SDK really sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  InternalServerError,
  OutcomeUnknownError,
  PaymentsClient,
  type PaymentsClientOptions,
  TimeoutError,
} from '../../lib/index.ts';
import { type SandboxClient, startSandboxClient, uniqueRef } from '../support/sandbox-client.ts';

const ROUTE = 'POST /disbursements/initialize';

interface LogEntry {
  method: string;
  path: string;
  status: number | null;
  fault?: { fault: string; commit_status?: number | null };
}

let sandbox: SandboxClient;

beforeAll(async () => {
  sandbox = await startSandboxClient();
});
afterAll(() => sandbox.close());

function client(options: Partial<PaymentsClientOptions> = {}) {
  return new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: sandbox.url,
    random: () => 0,
    ...options,
  });
}

const transfer = (reference: string) => ({
  reference,
  amount: 100,
  currency: 'NGN',
  customer_name: 'Grace Hopper',
  customer_email: 'grace@example.com',
  destination_bank_code: '058',
  destination_bank_account: '0123456789',
  destination_bank_name: 'GTBank',
});

async function addRule(rule: Record<string, unknown>): Promise<void> {
  const added = await sandbox.control('faults/rules', rule);
  expect(added.status).toBe(200);
}

// The call's exchanges once every timing window has closed (deferred commits included).
async function exchanges(requestId: string): Promise<{ posts: LogEntry[]; lookups: LogEntry[] }> {
  expect((await sandbox.control('idle')).status).toBe(200);
  const log = (await sandbox.control(`requests?request_id=${requestId}`)).body.data as LogEntry[];
  return {
    posts: log.filter((entry) => entry.method === 'POST'),
    lookups: log.filter((entry) => entry.method === 'GET'),
  };
}

const statuses = (entries: LogEntry[]) => entries.map((entry) => entry.status);

describe('PaymentsClient settle window (direct mode)', () => {
  describe('transfers.initialize after an ambiguous failure', () => {
    it('should send one POST when a 300 ms timeout fires and the transfer commits at 1.5 s', async () => {
      const reference = uniqueRef('settle-timeout');
      const requestId = `req-${reference}`;
      await addRule({ fault: 'delay', reference, route: ROUTE, after_ms: 1500 });
      // settleMs left to its default: the larger of 5000 ms and the 300 ms timeout.
      const made = await client({ timeoutMs: 300 }).transfers.initialize(transfer(reference), {
        requestId,
      });
      expect(made).toMatchObject({ reference, amount: 100, status: 'processing' });
      const { posts, lookups } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([200]);
      // Looked up while the provider was still holding the request, found it once committed.
      expect(statuses(lookups).at(0)).toBe(404);
      expect(statuses(lookups).at(-1)).toBe(200);
    });

    it('should send one POST when the connection drops and the transfer commits at 1.5 s', async () => {
      const reference = uniqueRef('settle-drop');
      const requestId = `req-${reference}`;
      await addRule({ fault: 'drop_then_commit', reference, route: ROUTE, after_ms: 1500 });
      const made = await client().transfers.initialize(transfer(reference), { requestId });
      expect(made).toMatchObject({ reference, amount: 100, status: 'processing' });
      const { posts, lookups } = await exchanges(requestId);
      expect(posts).toHaveLength(1);
      expect(posts[0]).toMatchObject({ status: null, fault: { commit_status: 200 } });
      expect(statuses(lookups).at(0)).toBe(404);
      expect(statuses(lookups).at(-1)).toBe(200);
    });

    it('should send one POST when the provider answers 503 and commits at 1.5 s', async () => {
      const reference = uniqueRef('settle-503');
      const requestId = `req-${reference}`;
      await addRule({
        fault: 'error_then_commit',
        reference,
        route: ROUTE,
        status: 503,
        after_ms: 1500,
      });
      const made = await client().transfers.initialize(transfer(reference), { requestId });
      expect(made).toMatchObject({ reference, amount: 100, status: 'processing' });
      const { posts, lookups } = await exchanges(requestId);
      expect(posts).toHaveLength(1);
      expect(posts[0]).toMatchObject({ status: 503, fault: { commit_status: 200 } });
      expect(statuses(lookups).at(0)).toBe(404);
      expect(statuses(lookups).at(-1)).toBe(200);
    });

    it('should answer the recovered record when the resend is refused as a duplicate reference', async () => {
      const reference = uniqueRef('settle-dup');
      const requestId = `req-${reference}`;
      // Committed 100 ms after the 502 but unreadable until 1.6 s: the 1 s window ends
      // with nothing found, the resend meets the record.
      await addRule({
        fault: 'error_then_commit',
        reference,
        route: ROUTE,
        status: 502,
        after_ms: 100,
      });
      await addRule({ fault: 'visible_after', reference, after_ms: 1500 });
      const made = await client({ settleMs: 1000 }).transfers.initialize(transfer(reference), {
        requestId,
      });
      expect(made).toMatchObject({ reference, amount: 100, status: 'processing' });
      const { posts, lookups } = await exchanges(requestId);
      expect(posts).toHaveLength(2);
      expect(posts[0]).toMatchObject({ status: 502, fault: { commit_status: 200 } });
      expect(posts[1]?.status).toBe(409);
      expect(statuses(lookups).at(-1)).toBe(200);
      expect(
        statuses(lookups)
          .slice(0, -1)
          .every((status) => status === 404),
      ).toBe(true);
    });

    it('should throw OutcomeUnknownError naming the reference when the record stays unreadable', async () => {
      const reference = uniqueRef('settle-unknown');
      const requestId = `req-${reference}`;
      await addRule({
        fault: 'error_then_commit',
        reference,
        route: ROUTE,
        status: 502,
        after_ms: 100,
      });
      await addRule({ fault: 'visible_after', reference, after_ms: 2500 });
      const error = await client({ settleMs: 500 })
        .transfers.initialize(transfer(reference), { requestId })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect((error as OutcomeUnknownError).reference).toBe(reference);
      expect((error as Error).message).toContain(`reference ${reference} exists`);
      expect((error as Error).cause).toMatchObject({ status: 409, code: 'duplicate_reference' });
      const { posts, lookups } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([502, 409]);
      expect(new Set(statuses(lookups))).toEqual(new Set([404]));
    });

    it('should resend once the window ends with the record still absent', async () => {
      const reference = uniqueRef('settle-absent');
      const requestId = `req-${reference}`;
      // An outage: the first POST is answered 503 and never processed.
      await addRule({ fault: 'error', reference, route: ROUTE, status: 503 });
      const made = await client({ settleMs: 800 }).transfers.initialize(transfer(reference), {
        requestId,
      });
      expect(made).toMatchObject({ reference, amount: 100 });
      const { posts, lookups } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([503, 200]);
      // At once after the backoff, then again up to the window's end: never a single lookup.
      expect(lookups.length).toBeGreaterThanOrEqual(2);
      expect(new Set(statuses(lookups))).toEqual(new Set([404]));
    });

    it('should never resend when the deadline ends inside the window', async () => {
      const reference = uniqueRef('settle-deadline');
      const requestId = `req-${reference}`;
      await addRule({ fault: 'error', reference, route: ROUTE, status: 503 });
      const error = await client({ settleMs: 5000, deadlineMs: 1200 })
        .transfers.initialize(transfer(reference), { requestId })
        .catch((e: unknown) => e);
      // The call's own failure: whether the provider will commit is unknown.
      expect(error).toBeInstanceOf(InternalServerError);
      const { posts, lookups } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([503]);
      expect(lookups.length).toBeGreaterThanOrEqual(1);
    });

    it('should stop at once when the caller aborts inside the window, without a resend', async () => {
      const reference = uniqueRef('settle-abort');
      const requestId = `req-${reference}`;
      await addRule({ fault: 'error', reference, route: ROUTE, status: 503 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user left')), 700);
      const error = await client({ settleMs: 5000 })
        .transfers.initialize(transfer(reference), { requestId, signal: controller.signal })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as AbortError).cause).toEqual(new Error('user left'));
      const { posts } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([503]);
    });

    it('should give the lookups only what is left of the call budget', async () => {
      const reference = uniqueRef('settle-budget');
      const requestId = `req-${reference}`;
      // Every lookup is held past the budget: the call must not wait for one.
      await addRule({ fault: 'error', reference, route: ROUTE, status: 503 });
      await addRule({
        fault: 'delay',
        reference,
        route: 'GET /disbursements/verify/:reference',
        after_ms: 3000,
        times: 10,
      });
      const timeouts: number[] = [];
      const error = await client({
        settleMs: 5000,
        deadlineMs: 1000,
        timeoutMs: 10_000,
        onResponse: (event) => {
          if (event.error instanceof TimeoutError) timeouts.push(event.error.timeoutMs);
        },
      })
        .transfers.initialize(transfer(reference), { requestId })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      // The held lookup timed out when the call's budget ended: it started after the 503 and
      // the 250 ms backoff, so it had at most 750 ms left, not a budget of its own.
      expect(timeouts.length).toBeGreaterThanOrEqual(1);
      expect(Math.max(...timeouts)).toBeLessThanOrEqual(750);
      const { posts } = await exchanges(requestId);
      expect(statuses(posts)).toEqual([503]);
    });
  });
});
