/**
 * Webhook retries (docs/sandbox.md, "Webhook retries"): like a provider, the sandbox sends
 * a webhook again when its receiver did not answer 2xx, on a schedule the tests set with
 * `POST /__sandbox/webhooks/retries`; `GET /__sandbox/webhooks` shows the attempts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS } from '../../../lib/testing/webhooks.ts';
import { transferBody, uniqueRef } from '../../support/payloads.ts';
import { type Json, startSandboxClient } from '../../support/sandbox-client.ts';
import { type InProcess, inProcess } from './timing-helpers.ts';

let s: InProcess | undefined;
afterEach(() => s?.sandbox.close());

/**
 * A receiver behind the sandbox's `fetch` option answering the given outcomes in turn
 * (a status, or `'network'` for a refused connection), then 200; `calls(n)` resolves at
 * the n-th attempt.
 */
function scriptedReceiver(outcomes: Array<number | 'network'>) {
  const waiters = new Map<number, () => void>();
  let count = 0;
  return {
    get count() {
      return count;
    },
    calls: (n: number) =>
      new Promise<void>((resolve) => {
        if (count >= n) resolve();
        else waiters.set(n, resolve);
      }),
    fetch: async (): Promise<Response> => {
      count += 1;
      const outcome = outcomes[count - 1] ?? 200;
      waiters.get(count)?.();
      if (outcome === 'network') throw new TypeError('fetch failed: connection refused');
      return new Response('', { status: outcome });
    },
  };
}

/** Creates a transfer and settles it, so its `disbursement_success` webhook goes out. */
async function emitOne(t: InProcess): Promise<string> {
  const reference = uniqueRef('tr');
  expect(
    (await t.call('POST', '/disbursements/initialize', transferBody({ reference }))).status,
  ).toBe(200);
  await t.control('clock/advance', { seconds: 6 });
  return reference;
}

async function webhookOf(t: InProcess, reference: string): Promise<Json> {
  const records = (await t.control('webhooks')).body.data as Json[];
  return records.find((record) => record.body.data.reference === reference);
}

describe('webhook retries', () => {
  it('should retry a receiver that failed twice and record 3 attempts, delivered', async () => {
    const receiver = scriptedReceiver([500, 'network']);
    s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
    await s.control('webhooks/retries', { delays_ms: [500, 50] });
    const reference = await emitOne(s);
    await s.sandbox.tick();
    // After the first failure: waiting for its retry, not failed.
    expect(await webhookOf(s, reference)).toMatchObject({
      delivery: 'pending',
      attempts: 1,
      response_status: 500,
      next_attempt_at: expect.any(String),
    });
    expect(receiver.count).toBe(1);
    await receiver.calls(3);
    await s.sandbox.tick();
    const record = await webhookOf(s, reference);
    expect(record).toMatchObject({ delivery: 'delivered', attempts: 3, response_status: 200 });
    expect(record.error).toBeUndefined();
    expect(record.next_attempt_at).toBeUndefined();
    expect(receiver.count).toBe(3);
  });

  it('should make one attempt and record failed when the schedule is []', async () => {
    const receiver = scriptedReceiver([503]);
    s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
    const set = await s.control('webhooks/retries', { delays_ms: [] });
    expect(set).toMatchObject({ status: 200, body: { data: { delays_ms: [] } } });
    const reference = await emitOne(s);
    await s.sandbox.tick();
    const record = await webhookOf(s, reference);
    expect(record).toMatchObject({ delivery: 'failed', attempts: 1, response_status: 503 });
    expect(record.next_attempt_at).toBeUndefined();
  });

  it('should record failed once the schedule is spent', async () => {
    const receiver = scriptedReceiver([500, 500, 500]);
    s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
    await s.control('webhooks/retries', { delays_ms: [10] });
    const reference = await emitOne(s);
    await receiver.calls(2);
    await s.sandbox.tick();
    expect(await webhookOf(s, reference)).toMatchObject({ delivery: 'failed', attempts: 2 });
    expect(receiver.count).toBe(2);
  });

  it('should retry by default after 1 s, and restore the default schedule on reset', async () => {
    const receiver = scriptedReceiver([500]);
    s = inProcess({ webhookUrl: 'http://hooks.test/in', fetch: receiver.fetch });
    expect((await s.control('webhooks/retries')).body.data.delays_ms).toEqual(
      DEFAULT_WEBHOOK_RETRY_DELAYS_MS,
    );
    expect(DEFAULT_WEBHOOK_RETRY_DELAYS_MS).toHaveLength(7);
    const reference = await emitOne(s);
    await s.sandbox.tick();
    const record = await webhookOf(s, reference);
    expect(record).toMatchObject({ delivery: 'pending', attempts: 1 });
    const due = Date.parse(record.next_attempt_at) - Date.now();
    expect(due).toBeGreaterThan(0);
    expect(due).toBeLessThanOrEqual(1_000);
    await s.control('webhooks/retries', { delays_ms: [5] });
    await s.control('reset', {});
    expect((await s.control('webhooks/retries')).body.data.delays_ms).toEqual(
      DEFAULT_WEBHOOK_RETRY_DELAYS_MS,
    );
  });

  it.each([
    ['no delays_ms', {}, 'delays_ms'],
    ['a negative delay', { delays_ms: [-1] }, 'delays_ms.0'],
    ['a fractional delay', { delays_ms: [1, 2.5] }, 'delays_ms.1'],
    ['a delay over a day', { delays_ms: [86_400_001] }, 'delays_ms.0'],
    ['21 retries', { delays_ms: Array.from({ length: 21 }, () => 1) }, 'delays_ms'],
    ['an unknown field', { delays_ms: [], delays: [] }, 'delays'],
  ])('should refuse %s with 400 naming the field', async (_label, body, field) => {
    s = inProcess();
    const res = await s.control('webhooks/retries', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.issues.map((issue: { path: string }) => issue.path)).toContain(field);
  });

  it('should retry over HTTP until a real receiver answers 200', async () => {
    const statuses = [503, 502];
    const hits: string[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits.push(req.headers['x-signature'] as string);
        res.writeHead(statuses[hits.length - 1] ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const api = await startSandboxClient({ webhookUrl: url });
    try {
      expect((await api.control('webhooks/retries', { delays_ms: [100, 100] })).status).toBe(200);
      const reference = uniqueRef('tr');
      await api.call('POST', '/disbursements/initialize', transferBody({ reference }));
      await api.advance(6);
      let record: Json;
      for (let i = 0; i < 200; i++) {
        await api.tick();
        record = (await api.webhooks()).find((w) => w.body.data.reference === reference);
        if (record?.delivery === 'delivered') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(record).toMatchObject({ delivery: 'delivered', attempts: 3, response_status: 200 });
      expect(hits).toHaveLength(3);
    } finally {
      await api.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
