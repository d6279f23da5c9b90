/**
 * The example receivers of docs/gateway.md, "Receiving deliveries" (examples/receiver:
 * server.ts with the `standardwebhooks` package, receiver.py with Python's standard
 * library) verify real deliveries of `npm start`'s gateway: each is started as its usage
 * line says, subscribed through the admin API, and sent a webhook the way the payment
 * service sends one. What the gateway recorded (delivered, or the receiver's 401) is read
 * back through the admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../lib/index.ts';
import { standardWebhookHeaders } from '../../worker/relay/standard-webhooks.ts';
import { adminCall } from '../support/child-process.ts';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';
import {
  RECEIVER_COMMANDS,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/receiver-process.ts';

const STACK_PORTS = { gateway: 18857, sandbox: 18858, receiver: 18859 };
/** One port per receiver of {@link RECEIVER_COMMANDS}. */
const RECEIVER_PORTS = [18867, 18868];
/** The merchant credentials of `.dev.vars.example` (adminCall sends its admin token). */
const MERCHANT = { keyId: 'sandbox-key', secret: 'sandbox-secret' };
/** How long a delivery may take to be recorded (the queue batches for 1 s). */
const DELIVERY_DEADLINE_MS = 30_000;

let stack: NpmStartStack | undefined;

beforeAll(async () => {
  stack = await startNpmStart(STACK_PORTS);
}, 100_000);

afterAll(async () => {
  await stack?.stop();
});

function gateway(path: string): string {
  if (stack === undefined) throw new Error('npm start is not running');
  return `${stack.gatewayUrl}${path}`;
}

/** One admin API call; the `data` of a 2xx answer (typed by the caller). */
async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const answer = (await adminCall(gateway(''), method, `/admin${path}`, body)) as
    | { data: T }
    | undefined;
  return answer?.data as T;
}

/** Posts a signed event to the gateway as the payment service does; returns its id. */
async function sendEvent(reference: string): Promise<string> {
  const eventId = `evt_receivers_${crypto.randomUUID()}`;
  // Not a money event, so the gateway delivers it at once, without confirming it upstream.
  const body = JSON.stringify({
    event_type: 'mandate_activated',
    event_id: eventId,
    timestamp: new Date().toISOString(),
    data: { reference },
  });
  const signature = await signRequest({ ...MERCHANT, body });
  const response = await fetch(gateway('/webhooks'), {
    method: 'POST',
    headers: { ...signature, 'Content-Type': 'application/json' },
    body,
  });
  expect(response.status, await response.text()).toBe(200);
  return eventId;
}

/** A subscription as created (the only answer with its secret). */
interface Subscription {
  id: string;
  secret: string;
}

interface DeliveryRow {
  status: string;
  attempts: number;
  last_status: number | null;
}

/** The delivery of an event to a subscription once it has had an attempt. */
async function attemptedDelivery(eventId: string, subscriptionId: string): Promise<DeliveryRow> {
  const query = new URLSearchParams({ event_id: eventId, subscription_id: subscriptionId });
  const deadline = Date.now() + DELIVERY_DEADLINE_MS;
  for (;;) {
    const [row] = await admin<DeliveryRow[]>('GET', `/deliveries?${query}`);
    if (row !== undefined && row.attempts > 0) return row;
    if (Date.now() > deadline) throw new Error(`no attempt of ${eventId} within the deadline`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits (bounded) until `pattern` appears in the receiver's output. */
async function printed(receiver: ReceiverProcess, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  while (!pattern.test(receiver.output()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return receiver.output();
}

describe.each(
  RECEIVER_COMMANDS.map((command, index) => ({ ...command, port: RECEIVER_PORTS[index] ?? 0 })),
)('the $name receiver (examples/receiver)', (command) => {
  let receiver: ReceiverProcess | undefined;
  let subscription: Subscription;

  beforeAll(async () => {
    const url = `http://127.0.0.1:${command.port}/`;
    subscription = await admin<Subscription>('POST', '/subscriptions', {
      url,
      description: `${command.name} receiver (receivers.test.ts)`,
    });
    receiver = await startReceiverProcess(command, subscription.secret, command.port);
    expect(receiver.url).toBe(url);
  }, 30_000);

  afterAll(async () => {
    await receiver?.stop();
  });

  const running = (): ReceiverProcess => {
    if (receiver === undefined) throw new Error('receiver not started');
    return receiver;
  };

  it('should verify a real delivery, which the gateway records as delivered', async () => {
    const reference = `ref_${crypto.randomUUID()}`;
    const eventId = await sendEvent(reference);
    const delivery = await attemptedDelivery(eventId, subscription.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 204 });
    const output = await printed(running(), new RegExp(`verified .* ${eventId} `));
    expect(output).toContain(
      `receiver: verified mandate_activated ${eventId} reference=${reference}\n`,
    );
    expect(output).not.toContain('receiver: rejected');
  });

  it('should refuse a delivery signed with a secret it does not hold (401, not delivered)', async () => {
    // A second subscription to the same receiver: the gateway signs with its new secret.
    const stranger = await admin<Subscription>('POST', '/subscriptions', {
      url: running().url,
      description: `${command.name} receiver, unknown secret (receivers.test.ts)`,
    });
    try {
      const eventId = await sendEvent(`ref_${crypto.randomUUID()}`);
      const refused = await attemptedDelivery(eventId, stranger.id);
      expect(refused).toMatchObject({ status: 'pending', last_status: 401 });
      const accepted = await attemptedDelivery(eventId, subscription.id);
      expect(accepted).toMatchObject({ status: 'delivered', last_status: 204 });
      expect(await printed(running(), /receiver: rejected a delivery/)).toMatch(
        /receiver: rejected a delivery: .*signature/i,
      );
    } finally {
      await admin('DELETE', `/subscriptions/${stranger.id}`);
    }
  });

  it('should keep verifying during a secret rotation, with the secret it holds', async () => {
    // The gateway signs with the new secret and the replaced one (for 24 h): the receiver,
    // still on the replaced one, finds its signature among the two.
    await admin('POST', `/subscriptions/${subscription.id}/rotate-secret`);
    const eventId = await sendEvent(`ref_${crypto.randomUUID()}`);
    const delivery = await attemptedDelivery(eventId, subscription.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status: 204 });
  });

  it('should refuse a tampered or stale delivery and not handle a repeated one twice', async () => {
    const url = running().url;
    const id = `evt_receivers_${crypto.randomUUID()}`;
    const body = JSON.stringify({
      event_type: 'mandate_activated',
      event_id: id,
      timestamp: new Date().toISOString(),
      data: { reference: 'ref_direct', amount: 5000 },
    });
    const now = Math.floor(Date.now() / 1000);
    // Signed exactly as the gateway signs a delivery.
    const headers = await standardWebhookHeaders({
      id,
      timestamp: now,
      body,
      secrets: [subscription.secret],
    });
    const post = async (text: string, signed: Headers) =>
      (await fetch(url, { method: 'POST', headers: signed, body: text })).status;

    expect(await post(body.replace('5000', '500000'), headers)).toBe(401);
    expect(await post(body, headers)).toBe(204);
    expect(await post(body, headers)).toBe(204);
    const stale = await standardWebhookHeaders({
      id: `${id}_stale`,
      timestamp: now - 10 * 60,
      body,
      secrets: [subscription.secret],
    });
    expect(await post(body, stale)).toBe(401);

    const output = await printed(running(), new RegExp(`duplicate ${id}, already handled`));
    expect(output.split(`receiver: verified mandate_activated ${id} `).length - 1).toBe(1);
    expect(output).toContain(`receiver: duplicate ${id}, already handled\n`);
  });
});
