/**
 * Helpers of the relay delivery tests: subscriptions pointing at the
 * recording receiver of test/global-setup.ts, events stored with their fan-out in the
 * real D1, the real Worker's `queue` handler run on a `createMessageBatch` batch, and
 * a recording stand-in for the `DELIVERIES` producer.
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  type QueueResult,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { fanOutDeliveriesStatement } from '../../worker/db/deliveries.ts';
import { insertSubscription, type SubscriptionRecord } from '../../worker/db/subscriptions.ts';
import { insertWebhookEventStatement } from '../../worker/db/webhook-events.ts';
import worker from '../../worker/index.ts';
import { generateSubscriptionSecret } from '../../worker/relay/subscription-secret.ts';
import { envelope } from './webhook-helpers.ts';

/** Options of {@link createReceiverSubscription}. */
export interface ReceiverSubscriptionInit {
  /** Query of the receiver URL: `status`, `retry_after`, ... (the `key` is added). */
  readonly query?: Record<string, string>;
  /** Replaces the receiver URL altogether. */
  readonly url?: string;
  readonly eventTypes?: readonly string[] | null;
  readonly enabled?: boolean;
  readonly previousSecret?: string | null;
  readonly previousSecretExpiresAt?: number | null;
}

/** A subscription stored in D1 and the receiver key its deliveries are recorded under. */
export interface ReceiverSubscription {
  readonly subscription: SubscriptionRecord;
  readonly key: string;
}

// Subscriptions created by the running file, so its tests can retire them (D1 outlives a test).
const created = new Set<string>();

/**
 * Disables every subscription this file created so far, so a later test's fan-out
 * sees only its own (call it in `afterEach`).
 */
export async function disableTestSubscriptions(): Promise<void> {
  const ids = [...created];
  created.clear();
  if (ids.length === 0) return;
  await env.DB.prepare(
    `UPDATE subscriptions SET enabled = 0 WHERE id IN (SELECT value FROM json_each(?1))`,
  )
    .bind(JSON.stringify(ids))
    .run();
}

/** Stores a subscription delivering to the receiver under a fresh key. */
export async function createReceiverSubscription(
  init: ReceiverSubscriptionInit = {},
): Promise<ReceiverSubscription> {
  const key = crypto.randomUUID();
  const query = new URLSearchParams({ key, ...init.query });
  const now = Date.now();
  const subscription: SubscriptionRecord = {
    id: `sub_${crypto.randomUUID()}`,
    url: init.url ?? `${inject('receiverUrl')}/hooks?${query}`,
    eventTypes: init.eventTypes === undefined ? null : init.eventTypes,
    description: null,
    enabled: init.enabled ?? true,
    secret: generateSubscriptionSecret(),
    previousSecret: init.previousSecret ?? null,
    previousSecretExpiresAt: init.previousSecretExpiresAt ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await insertSubscription(env.DB, subscription);
  created.add(subscription.id);
  return { subscription, key };
}

/** An event stored with its fan-out, as the ingress stores it. */
export interface StoredEvent {
  readonly eventId: string;
  readonly rawBody: string;
  readonly deliveryIds: string[];
}

/** Stores an event of `eventType` (under `eventId`, else a fresh one) and its deliveries in one batch (no enqueue). */
export async function storeEvent(eventType: string, eventId?: string): Promise<StoredEvent> {
  const rawBody = JSON.stringify(
    envelope({ event_type: eventType, ...(eventId === undefined ? {} : { event_id: eventId }) }),
  );
  const event = {
    eventId: JSON.parse(rawBody).event_id as string,
    eventType,
    receivedAt: Date.now(),
    rawBody,
  };
  const [, fanOut] = await env.DB.batch<{ id: string }>([
    insertWebhookEventStatement(env.DB, event),
    fanOutDeliveriesStatement(env.DB, event),
  ]);
  return { eventId: event.eventId, rawBody, deliveryIds: (fanOut?.results ?? []).map((r) => r.id) };
}

/** Stores an event for one new receiver subscription; returns both and the delivery id. */
export async function storeDelivery(
  init: ReceiverSubscriptionInit = {},
  eventId?: string,
): Promise<ReceiverSubscription & StoredEvent & { deliveryId: string }> {
  const eventType = `test_${crypto.randomUUID()}`;
  const created = await createReceiverSubscription({ ...init, eventTypes: [eventType] });
  const stored = await storeEvent(eventType, eventId);
  expect(stored.deliveryIds).toHaveLength(1);
  return { ...created, ...stored, deliveryId: stored.deliveryIds[0] ?? '' };
}

/** One message of {@link runQueue}. */
export interface TestMessage {
  readonly body: unknown;
  /** `message.attempts`. @default 1 */
  readonly attempts?: number;
}

/**
 * Runs the real Worker's `queue` handler on a batch of `queue` and returns what it
 * acked and retried. `ALLOW_LOCAL_SUBSCRIBERS` is on (the receiver is on loopback)
 * unless `overrides` says otherwise.
 */
export async function runQueue(
  queue: string,
  messages: readonly TestMessage[],
  overrides: Partial<Env> = {},
): Promise<QueueResult> {
  const batch = createMessageBatch(
    queue,
    messages.map((message, index) => ({
      id: `msg-${index}`,
      timestamp: new Date(),
      attempts: message.attempts ?? 1,
      body: message.body,
    })),
  );
  // getQueueResult of @cloudflare/vitest-plugin 1.4.10 drops `delaySeconds` (its type has
  // it): watch each message's retry() to put it back.
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ALLOW_LOCAL_SUBSCRIBERS: 'true', ...overrides }, ctx);
  const result = await getQueueResult(batch, ctx);
  const retryMessages = result.retryMessages.map(({ msgId }) => {
    const delaySeconds = delays.get(msgId);
    return delaySeconds === undefined ? { msgId } : { msgId, delaySeconds };
  });
  return { ...result, retryMessages };
}

/** One request the receiver recorded (test/support/delivery-receiver.ts). */
export interface ReceivedDelivery {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What the receiver got under `key`, oldest first. */
export async function receivedUnder(key: string): Promise<ReceivedDelivery[]> {
  const res = await fetch(`${inject('receiverUrl')}/__received?key=${encodeURIComponent(key)}`);
  const json = (await res.json()) as { data: ReceivedDelivery[] };
  return json.data;
}

/** Makes the receiver answer `status` to every later request under `key`. */
export async function setReceiverStatus(key: string, status: number): Promise<void> {
  const res = await fetch(
    `${inject('receiverUrl')}/__status?key=${encodeURIComponent(key)}&status=${status}`,
    {
      method: 'PUT',
    },
  );
  expect(res.status).toBe(200);
}

/** A stand-in for the `DELIVERIES` producer that records every `sendBatch`. */
export interface RecordingQueue {
  readonly queue: Queue;
  readonly batches: MessageSendRequest[][];
}

/** A {@link RecordingQueue}; `failWith` makes `send` and `sendBatch` reject. */
export function recordingQueue(failWith?: Error): RecordingQueue {
  const batches: MessageSendRequest[][] = [];
  const queue: Queue = {
    metrics: async () => ({ backlogCount: 0, backlogBytes: 0 }),
    send: async (body) => {
      if (failWith !== undefined) throw failWith;
      batches.push([{ body }]);
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
    },
    sendBatch: async (messages) => {
      if (failWith !== undefined) throw failWith;
      batches.push([...messages]);
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
    },
  };
  return { queue, batches };
}
