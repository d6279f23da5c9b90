/**
 * Helpers of the relay delivery tests: subscriptions pointing at the
 * recording receiver of test/global-setup.ts, events stored with their fan-out in the
 * real D1, delivery rows written directly with chosen statuses and times, the real
 * Worker's `queue` handler run on a `createMessageBatch` batch, and a recording stand-in
 * for the `DELIVERIES` producer.
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  type QueueResult,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { type DeliveryStatus, fanOutDeliveriesStatement } from '../../../worker/db/deliveries.ts';
import {
  insertSubscription,
  type NewSubscriptionRecord,
} from '../../../worker/db/subscriptions.ts';
import {
  insertWebhookEventStatement,
  type WebhookEventStatus,
} from '../../../worker/db/webhook-events.ts';
import worker from '../../../worker/index.ts';
import { referenceOf, type WebhookEnvelope } from '../../../worker/relay/envelope.ts';
import { generateSubscriptionSecret } from '../../../worker/relay/subscription-secret.ts';
import { envelope } from '../routes/webhook-helpers.ts';
import { prepareOutboxes, settleOutboxes } from './outbox-helpers.ts';

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
  readonly subscription: NewSubscriptionRecord;
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
  const subscription: NewSubscriptionRecord = {
    id: `sub_${crypto.randomUUID()}`,
    url: init.url ?? `${inject('receiverUrl')}/hooks?${query}`,
    eventTypes: init.eventTypes === undefined ? null : init.eventTypes,
    description: null,
    enabled: init.enabled ?? true,
    secret: generateSubscriptionSecret(),
    previousSecrets:
      init.previousSecret == null
        ? []
        : [{ secret: init.previousSecret, expiresAt: init.previousSecretExpiresAt ?? now }],
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

/** Options of {@link storeEvent}. */
export interface StoredEventInit {
  /** @default a fresh `evt_<uuid>` */
  readonly eventId?: string;
  /** Epoch ms, also the deliveries' creation time. @default Date.now() */
  readonly receivedAt?: number;
  /** @default 'received' */
  readonly status?: WebhookEventStatus;
  /** Replaces the envelope's `data`; its `reference` is stored as the ingress stores it. */
  readonly data?: Record<string, unknown>;
}

/**
 * Stores an event of `eventType` and its deliveries in one batch, as the ingress does
 * (no enqueue); `init` sets its id, receive time, status and `data`.
 */
export async function storeEvent(
  eventType: string,
  init: StoredEventInit = {},
): Promise<StoredEvent> {
  // Not validated: some tests store ids the ingress would refuse.
  const body = envelope({
    event_type: eventType,
    ...(init.eventId === undefined ? {} : { event_id: init.eventId }),
    ...(init.data === undefined ? {} : { data: init.data }),
  });
  const rawBody = JSON.stringify(body);
  const event = {
    eventId: body.event_id as string,
    eventType,
    receivedAt: init.receivedAt ?? Date.now(),
    reference: referenceOf(body as Pick<WebhookEnvelope, 'data'>),
    rawBody,
  };
  const [, fanOut] = await env.DB.batch<{ id: string }>([
    await insertWebhookEventStatement(env.DB, event, init.status),
    fanOutDeliveriesStatement(env.DB, event),
  ]);
  return { eventId: event.eventId, rawBody, deliveryIds: (fanOut?.results ?? []).map((r) => r.id) };
}

/** A delivery row of {@link insertDeliveries}. */
export interface DeliveryRowInit {
  readonly eventId: string;
  /** Any text: the column has no foreign key. @default a fresh `sub_test_<uuid>` */
  readonly subscriptionId?: string;
  /** @default 'pending' */
  readonly status?: DeliveryStatus;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms. @default createdAt */
  readonly updatedAt?: number;
}

/**
 * Writes delivery rows directly (no subscription, no fan-out, no enqueue), in one batch,
 * so a test chooses their status and times.
 *
 * @returns the new delivery ids, in the order of `rows`.
 */
export async function insertDeliveries(rows: readonly DeliveryRowInit[]): Promise<string[]> {
  const ids = rows.map(() => `dlv_test_${crypto.randomUUID()}`);
  await env.DB.batch(
    rows.map((row, index) =>
      env.DB.prepare(
        `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
           last_status, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 0, NULL, NULL, ?5, ?6)`,
      ).bind(
        ids[index],
        row.eventId,
        row.subscriptionId ?? `sub_test_${crypto.randomUUID()}`,
        row.status ?? 'pending',
        row.createdAt,
        row.updatedAt ?? row.createdAt,
      ),
    ),
  );
  return ids;
}

/** Stores an event for one new receiver subscription; returns both and the delivery id. */
export async function storeDelivery(
  init: ReceiverSubscriptionInit = {},
  eventId?: string,
): Promise<ReceiverSubscription & StoredEvent & { deliveryId: string }> {
  const eventType = `test_${crypto.randomUUID()}`;
  const created = await createReceiverSubscription({ ...init, eventTypes: [eventType] });
  const stored = await storeEvent(eventType, eventId === undefined ? {} : { eventId });
  expect(stored.deliveryIds).toHaveLength(1);
  return { ...created, ...stored, deliveryId: stored.deliveryIds[0] ?? '' };
}

/** One message of {@link runQueue}. */
export interface TestMessage {
  readonly body: unknown;
  /** `message.attempts`. @default 1 */
  readonly attempts?: number;
  /**
   * `message.timestamp`, when the message was sent: the queue keeps it when it delivers a
   * message again, so a test repeating a message passes the first one's. @default now
   */
  readonly timestamp?: Date;
}

/**
 * Runs the real Worker's `queue` handler on a batch of `queue` and returns what it
 * acked and retried. `ALLOW_LOCAL_SUBSCRIBERS` is on (the receiver is on loopback)
 * unless `overrides` says otherwise. A delivery message the consumer handed to its
 * subscription's outbox is reported as the outcome of the outbox's attempt, once settled:
 * acked when delivered or failed, retried with the outbox's delay (outbox-helpers.ts).
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
      timestamp: message.timestamp ?? new Date(),
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
  const workerEnv = { ...env, ALLOW_LOCAL_SUBSCRIBERS: 'true', ...overrides };
  const outboxes = await prepareOutboxes(batch.messages, workerEnv);
  const ctx = createExecutionContext();
  await worker.queue(batch, workerEnv, ctx);
  const result = await getQueueResult(batch, ctx);
  const retryMessages = result.retryMessages.map(({ msgId }) => {
    const delaySeconds = delays.get(msgId);
    return delaySeconds === undefined ? { msgId } : { msgId, delaySeconds };
  });
  return settleOutboxes(outboxes, { ...result, retryMessages });
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
