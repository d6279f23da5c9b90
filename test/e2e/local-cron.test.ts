import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../lib/index.ts';
import { QUIET_ENV, ROOT, WRANGLER } from '../../scripts/gateway-dev.ts';
import { adminCall } from '../support/child-process.ts';
import { type DeliveryReceiver, startDeliveryReceiver } from '../support/delivery-receiver.ts';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';

// `npm start` fires the cron triggers itself (wrangler dev does not), so its relay heals like
// production's: a delivery whose queue message was lost in a restart of the stack is
// re-enqueued by the sweeper and delivered, with nobody calling the scheduled endpoint.
// (A retry now lives in the subscription's outbox, which survives a restart; the test removes
// the outbox's storage to lose it.)
// Ports of its own: readme-session.test.ts uses 18787-18789, console.test.ts 18797-18799,
// crash.test.ts 18817-18818.
const PORTS = { gateway: 18807, sandbox: 18808, receiver: 18809 };
/** The webhook secret of `.dev.vars.example` (the sandbox signs with the merchant secret). */
const MERCHANT = { keyId: 'sandbox-key', secret: 'sandbox-secret' };
/** The sweeper re-enqueues deliveries more than 10 minutes past due: the test's "downtime". */
const DOWNTIME_MS = 20 * 60 * 1000;
/** How often the second stack runs the cron (EDGEPAY_CRON_INTERVAL_MS), in milliseconds. */
const CRON_INTERVAL_MS = 1500;
const WAIT_MS = 30_000;

const state = mkdtempSync(join(tmpdir(), 'edgepay-cron-'));
const key = `lost-${Date.now()}`;
const eventId = `evt_cron_${crypto.randomUUID()}`;
let subscriber: DeliveryReceiver;
let stack: NpmStartStack | undefined;

beforeAll(async () => {
  subscriber = await startDeliveryReceiver();
}, 10_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), subscriber?.close()]);
  rmSync(state, { recursive: true, force: true });
});

function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  return adminCall(`http://127.0.0.1:${PORTS.gateway}`, method, path, body);
}

async function received(): Promise<{ headers: Record<string, string> }[]> {
  const response = await fetch(`${subscriber.url}/__received?key=${key}`);
  return ((await response.json()) as { data: { headers: Record<string, string> }[] }).data;
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const found = await check();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface DeliveryRow {
  status: string;
  attempts: number;
}

async function ourDelivery(): Promise<DeliveryRow | undefined> {
  const page = (await admin('GET', `/admin/deliveries?event_id=${eventId}`)) as {
    data: (DeliveryRow & { subscription_id: string })[];
  };
  return page.data.find((row) => row.subscription_id === subscriptionId);
}

let subscriptionId = '';

describe('npm start', () => {
  describe('local cron', () => {
    it('should deliver a pending delivery whose queue message was lost, with no manual trigger', async () => {
      // 1. A subscriber that is down: the first attempt fails and the retry is queued.
      await fetch(`${subscriber.url}/__status?key=${key}&status=503`, { method: 'PUT' });
      stack = await startNpmStart(PORTS, 90_000, { persistTo: state });
      const created = (await admin('POST', '/admin/subscriptions', {
        url: `${subscriber.url}/hook?key=${key}`,
        description: 'local cron test',
      })) as { data: { id: string } };
      subscriptionId = created.data.id;
      const body = JSON.stringify({
        event_type: 'mandate_activated',
        event_id: eventId,
        timestamp: new Date().toISOString(),
        status: 'success',
        message: 'Mandate activated',
        data: { reference: `mandate-${key}` },
      });
      const ingress = await fetch(`${stack.gatewayUrl}/webhooks`, {
        method: 'POST',
        headers: {
          ...(await signRequest({ ...MERCHANT, body })),
          'Content-Type': 'application/json',
        },
        body,
      });
      expect(ingress.status).toBe(200);
      // Recorded, not only received: a stack stopped between the request and its record
      // would lose the attempt itself, another window than the lost retry message here.
      await waitFor('the first attempt', async () =>
        (await received()).length > 0 && (await ourDelivery())?.attempts === 1 ? 1 : undefined,
      );

      // 2. The stack stops. The retry is the subscription outbox's, a Durable Object whose
      // storage survives a restart; its storage is removed here, so the retry is lost as a
      // queue message in wrangler dev's memory was (the sweeper's case: D1 says pending).
      await stack.stop();
      stack = undefined;
      const failedAttempts = (await received()).length;
      const outboxes = readdirSync(state, { recursive: true, encoding: 'utf8' }).filter((path) =>
        /SubscriberOutbox[^/]*$/.test(path),
      );
      expect(outboxes.length, 'the outbox storage under the persisted state').toBeGreaterThan(0);
      for (const path of outboxes) rmSync(join(state, path), { recursive: true, force: true });

      // 3. The stack stays down longer than the sweeper's grace: the stored times are moved
      // back by the downtime (the local D1 is a file; nothing else runs on it now).
      const aged = spawnSync(
        WRANGLER,
        [
          'd1',
          'execute',
          'DB',
          '--local',
          '--persist-to',
          state,
          '--command',
          `UPDATE deliveries SET next_attempt_at = next_attempt_at - ${DOWNTIME_MS}, created_at = created_at - ${DOWNTIME_MS}, updated_at = updated_at - ${DOWNTIME_MS} WHERE event_id = '${eventId}'`,
        ],
        { cwd: ROOT, env: QUIET_ENV, encoding: 'utf8' },
      );
      expect(aged.status, aged.stderr).toBe(0);

      // 4. The subscriber is back, the stack restarts on the same state. Nobody triggers the
      // cron: npm start does (every CRON_INTERVAL_MS here instead of every 15 minutes).
      await fetch(`${subscriber.url}/__status?key=${key}&status=200`, { method: 'PUT' });
      stack = await startNpmStart(PORTS, 90_000, {
        persistTo: state,
        env: { EDGEPAY_CRON_INTERVAL_MS: String(CRON_INTERVAL_MS) },
      });
      const restarted = stack;
      expect(restarted.output()).toMatch(/cron +\*\/15 \* \* \* \* runs locally/);

      const delivered = await waitFor('the delivery', async () => {
        const row = await ourDelivery();
        return row?.status === 'delivered' ? row : undefined;
      });
      const requests = await received();
      expect(requests.length).toBe(failedAttempts + 1);
      expect(requests.at(-1)?.headers['webhook-id']).toBe(eventId);
      expect(delivered.attempts).toBe(failedAttempts + 1);
      // The sweeper of a cron run re-enqueued it, a run npm start made (not the test).
      const sweeps = restarted
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes('"relay_swept"'))
        .map((line) => JSON.parse(line) as { requeued: number });
      expect(sweeps.some((sweep) => sweep.requeued >= 1)).toBe(true);
      expect(restarted.output()).toMatch(/start: cron "\*\/15 \* \* \* \*" ran \(scheduled time /);
    }, 240_000);
  });
});
