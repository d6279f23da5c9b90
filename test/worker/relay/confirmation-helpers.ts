/**
 * Helpers of the deferred confirmation tests: the confirm sandbox
 * (`inject('confirmSandboxUrl')`, its own instance) as the upstream with confirmation on,
 * its fault rules and emitted webhooks, the ingress with a recording `DELIVERIES`, and the
 * real Worker's queue and scheduled handlers run on what was recorded.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { PaymentsClient } from '../../../lib/index.ts';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { findWebhookEvent, type WebhookEventRecord } from '../../../worker/db/webhook-events.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { fetchGateway } from '../helpers.ts';
import { webhookRequest } from '../routes/webhook-helpers.ts';
import { recordingQueue, runQueue } from './delivery-helpers.ts';

const SANDBOX = (): string => inject('confirmSandboxUrl');

/** Bindings with confirmation on against the confirm sandbox, and `queue` as `DELIVERIES`. */
const confirmOn = (queue: Queue): Partial<Env> => ({
  CONFIRM_MONEY_EVENTS: 'true',
  UPSTREAM_BASE_URL: SANDBOX(),
  DELIVERIES: queue,
});

/** A client of the confirm sandbox (signed with the merchant's credentials). */
export const sandboxClient = (): PaymentsClient =>
  new PaymentsClient({ keyId: 'sandbox-key', secret: 'sandbox-secret', baseUrl: SANDBOX() });

/** POSTs a test control of the confirm sandbox; expects 200 and returns `data`. */
export async function control(path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${SANDBOX()}/__sandbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { data?: unknown }).data;
}

/** Adds a timing fault rule (docs/sandbox.md); returns its id. */
export async function addRule(rule: Record<string, unknown>): Promise<string> {
  const data = (await control('faults/rules', rule)) as { id: string };
  return data.id;
}

/** How many times the rule `id` fired. */
export async function firedCount(id: string): Promise<number> {
  const res = await fetch(`${SANDBOX()}/__sandbox/faults/rules`);
  const json = (await res.json()) as { data: Array<{ id: string; fired: number }> };
  return json.data.find((rule) => rule.id === id)?.fired ?? -1;
}

/** An envelope the sandbox emitted. */
export interface Envelope {
  event_type: string;
  event_id: string;
  data: Record<string, unknown>;
}

/** The newest (or `oldest`) envelope of `type` the sandbox emitted whose data names `value`. */
export async function emitted(
  type: string,
  value: string,
  which: 'newest' | 'oldest' = 'newest',
): Promise<Envelope> {
  const res = await fetch(`${SANDBOX()}/__sandbox/webhooks`);
  const json = (await res.json()) as { data: Array<{ body: Envelope }> };
  const bodies = json.data.map((record) => record.body);
  const found = (which === 'newest' ? bodies.reverse() : bodies).find(
    (e) => e.event_type === type && Object.values(e.data).includes(value),
  );
  if (found === undefined) throw new Error(`the sandbox emitted no ${type} for ${value}`);
  return found;
}

/**
 * Waits until `read` answers `expected` (reads of a `webhook_early` record lag in real
 * time), at most 100 reads 100 ms apart.
 */
export async function waitUntil(read: () => Promise<unknown>, expected: unknown): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await read()) === expected) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`still not ${String(expected)} after 10 s`);
}

/** What the gateway sent to `DELIVERIES` while handling one request or batch. */
export type Sent = MessageSendRequest[];

/** POSTs `body` to the ingress, signed, with confirmation on; returns the response and what it enqueued. */
export async function ingest(body: string): Promise<{ res: Response; sent: Sent }> {
  const recorder = recordingQueue();
  const res = await fetchGateway(await webhookRequest(body), confirmOn(recorder.queue));
  return { res, sent: recorder.batches.flat() };
}

/**
 * Runs the real Worker's `queue` handler on `messages` (their bodies, as the queue would
 * hand them over once their delay is over), all in one batch; returns what it enqueued.
 */
export async function runMessages(messages: Sent): Promise<Sent> {
  const recorder = recordingQueue();
  const result = await runQueue(
    DELIVERIES_QUEUE,
    messages.map((message) => ({ body: message.body })),
    confirmOn(recorder.queue),
  );
  expect(result.retryMessages).toEqual([]);
  return recorder.batches.flat();
}

/** Runs the real Worker's `scheduled` handler at `scheduledTime`; returns what it enqueued. */
export async function runCron(scheduledTime: number): Promise<Sent> {
  const recorder = recordingQueue();
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime, cron: '*/15 * * * *' }),
    { ...env, ...confirmOn(recorder.queue) },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return recorder.batches.flat();
}

/** The check message of `eventId` after `check` checks, with its queue delay. */
export const checkMessage = (eventId: string, check: number, delaySeconds: number) => ({
  body: { kind: 'confirm', eventId, check },
  delaySeconds,
});

/** The stored event; fails when there is none. */
export async function storedEvent(eventId: string): Promise<WebhookEventRecord> {
  const event = await findWebhookEvent(env.DB, eventId);
  if (event === undefined) throw new Error(`no event ${eventId}`);
  return event;
}

/** The ids of an event's deliveries. */
export async function deliveryIdsOf(eventId: string): Promise<string[]> {
  return (await listEventDeliveries(env.DB, eventId)).map((delivery) => delivery.id);
}
