/**
 * Timing fault rules over real HTTP, on the server `edgepay sandbox` runs
 * (`startSandboxServer({ port: 0 })`, docs/sandbox.md, "Timing faults"): driven only
 * through the `/__sandbox/` controls, as a test suite in any language would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/signing.ts';
import { transferBody } from '../../support/payloads.ts';
import { type Json, type SandboxClient, startSandboxClient } from '../../support/sandbox-client.ts';
import { startWebhookReceiver } from '../../support/webhook-receiver.ts';

const INIT = 'POST /disbursements/initialize';
/** Long enough that the calls made inside the window land in it on a slow machine. */
const WINDOW_MS = 1_500;

let api: SandboxClient;
beforeAll(async () => {
  api = await startSandboxClient();
});
afterAll(() => api.close());

async function rule(body: Record<string, unknown>): Promise<Json> {
  const res = await api.control('faults/rules', body);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Waits, over HTTP, until every timing window has closed. */
async function idle(): Promise<void> {
  expect((await api.control('idle')).status).toBe(200);
}

/** The POSTs the request log holds for one request id. */
async function loggedPosts(requestId: string): Promise<Json[]> {
  const res = await api.control(`requests?request_id=${requestId}`);
  return res.body.data.filter((entry: Json) => entry.method === 'POST');
}

const verify = (reference: string) => api.call('GET', `/disbursements/verify/${reference}`);

function initialize(body: Record<string, unknown>, requestId: string) {
  return api.call('POST', '/disbursements/initialize', body, {
    headers: { 'X-Request-Id': requestId },
  });
}

describe('timing faults over HTTP', () => {
  it('should answer error with the rule status and process nothing', async () => {
    const body = transferBody();
    await rule({ fault: 'error', reference: body.reference, status: 504 });
    const id = crypto.randomUUID();
    const res = await initialize(body, id);
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ status: 'error', code: 'internal_error', request_id: id });
    await idle();
    expect((await verify(String(body.reference))).status).toBe(404);
  });

  it('should answer error_then_commit with 503 and show the record only after the window', async () => {
    const body = transferBody();
    const reference = String(body.reference);
    await rule({ fault: 'error_then_commit', reference, route: INIT, after_ms: WINDOW_MS });
    const id = crypto.randomUUID();
    expect((await initialize(body, id)).status).toBe(503);
    expect((await verify(reference)).status).toBe(404);
    await idle();
    expect((await verify(reference)).body.data.transfer_status).toBe('processing');
    const posts = await loggedPosts(id);
    expect(posts).toEqual([
      expect.objectContaining({
        status: 503,
        fault: expect.objectContaining({ commit_status: 200 }),
      }),
    ]);
  });

  it('should destroy the socket for drop_then_commit and commit after the window', async () => {
    const body = transferBody();
    const reference = String(body.reference);
    await rule({ fault: 'drop_then_commit', reference, route: INIT, after_ms: WINDOW_MS });
    const id = crypto.randomUUID();
    await expect(initialize(body, id)).rejects.toBeInstanceOf(TypeError);
    expect((await verify(reference)).status).toBe(404);
    await idle();
    expect((await verify(reference)).status).toBe(200);
    expect(await loggedPosts(id)).toEqual([expect.objectContaining({ status: null })]);
  });

  it('should hold a delayed request past a shorter client timeout and still commit it', async () => {
    const body = transferBody();
    const reference = String(body.reference);
    await rule({ fault: 'delay', reference, route: INIT, after_ms: WINDOW_MS });
    const raw = JSON.stringify(body);
    const id = crypto.randomUUID();
    const sent = fetch(`${api.url}/disbursements/initialize`, {
      method: 'POST',
      headers: {
        ...(await signRequest({ keyId: 'sandbox-key', secret: 'sandbox-secret', body: raw })),
        'Content-Type': 'application/json',
        'X-Request-Id': id,
      },
      body: raw,
      signal: AbortSignal.timeout(200),
    });
    await expect(sent).rejects.toMatchObject({ name: 'TimeoutError' });
    // The client gave up; the provider has not processed it yet.
    expect((await verify(reference)).status).toBe(404);
    await idle();
    expect((await verify(reference)).status).toBe(200);
    expect(await loggedPosts(id)).toEqual([expect.objectContaining({ status: 200 })]);
  });

  it('should answer visible_after creations at once and 404 their reads until the window ends', async () => {
    const body = transferBody();
    const reference = String(body.reference);
    await rule({ fault: 'visible_after', reference, after_ms: WINDOW_MS });
    expect((await initialize(body, crypto.randomUUID())).status).toBe(200);
    expect((await verify(reference)).status).toBe(404);
    expect((await initialize(body, crypto.randomUUID())).body.code).toBe('duplicate_reference');
    await idle();
    expect((await verify(reference)).status).toBe(200);
  });

  it('should settle a final_after transfer on its own timer, not the sandbox clock', async () => {
    const body = transferBody();
    const reference = String(body.reference);
    await rule({ fault: 'final_after', reference, after_ms: WINDOW_MS });
    await initialize(body, crypto.randomUUID());
    await api.advance(60);
    await api.tick();
    expect((await verify(reference)).body.data.transfer_status).toBe('processing');
    await idle();
    expect((await verify(reference)).body.data.transfer_status).toBe('success');
  });

  it('should deliver a webhook_early event while verify still shows the previous state', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const body = transferBody({
        destination_bank_account: '0000000000',
        webhook_url: receiver.url,
      });
      const reference = String(body.reference);
      await rule({ fault: 'webhook_early', reference, after_ms: WINDOW_MS });
      await initialize(body, crypto.randomUUID());
      await api.advance(6);
      const hook = await receiver.waitFor((h) => h.body?.data?.reference === reference, {
        tick: () => api.tick(),
      });
      expect(hook.body.event_type).toBe('disbursement_failed');
      expect((await verify(reference)).body.data.transfer_status).toBe('processing');
      await idle();
      expect((await verify(reference)).body.data.transfer_status).toBe('failed');
    } finally {
      await receiver.close();
    }
  });

  it('should list the rules with how many times each fired', async () => {
    const res = await api.control('faults/rules');
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const listed of res.body.data) expect(listed.fired).toBeGreaterThanOrEqual(1);
  });
});
