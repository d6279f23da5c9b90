/**
 * Helpers of the relay tests for the subscription outboxes (worker/relay/subscriber-outbox.ts):
 * the consumer acks a delivery message once its outbox holds it, and the outbox makes the
 * attempt. These give each outbox a test's settings (and fake network) before the consumer
 * runs, wait until the attempts due now are settled, and read what each outbox still holds.
 */
import { type QueueResult, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { shardOfMessage } from '../../../worker/db/event-shards.ts';
import { OutboxGate } from '../../../worker/relay/outbox-limits.ts';
import type { SubscriberOutbox } from '../../../worker/relay/subscriber-outbox.ts';

/** A delivery message and the outbox of its subscription. */
export interface OutboxOfMessage {
  readonly msgId: string;
  readonly deliveryId: string;
  readonly stub: DurableObjectStub<SubscriberOutbox>;
}

/** A row of an outbox, as stored. */
export interface HeldDelivery {
  readonly delivery_id: string;
  readonly attempts: number;
  readonly due_at: number;
  readonly sending_since: number | null;
  readonly retry_delay_sec: number | null;
}

/** The outbox of a subscription (one instance per subscription id). */
export const outboxOf = (subscriptionId: string) => env.SUBSCRIBER_OUTBOX.getByName(subscriptionId);

/**
 * Gives the outbox of each delivery message's subscription the Worker settings `workerEnv`
 * (the consumer's own are passed to `worker.queue`) and, when given, a fake network.
 *
 * @param messages - the batch's messages; those without a known delivery are left out.
 */
export async function prepareOutboxes(
  messages: readonly { id: string; body: unknown }[],
  workerEnv: Env,
  network?: typeof fetch,
): Promise<OutboxOfMessage[]> {
  const outboxes: OutboxOfMessage[] = [];
  for (const message of messages) {
    const deliveryId = (message.body as { deliveryId?: unknown } | null)?.deliveryId;
    if (typeof deliveryId !== 'string') continue;
    // The message names the event shard holding the delivery (absent: DB).
    const delivery = await findDelivery(shardOfMessage(env, message.body).db, deliveryId);
    if (delivery === undefined) continue;
    const stub = outboxOf(delivery.subscriptionId);
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as { env: Env }).env = workerEnv;
      if (network !== undefined) instance.network = network;
    });
    outboxes.push({ msgId: message.id, deliveryId, stub });
  }
  return outboxes;
}

/** When an outbox's gate lets the next attempt start (0: now), epoch ms. */
export function gateOpensAt(stub: DurableObjectStub<SubscriberOutbox>): Promise<number> {
  return runInDurableObject(stub, (_, state) => new OutboxGate(state.storage.kv).openAt());
}

/** Every row an outbox holds. */
export function heldDeliveries(stub: DurableObjectStub<SubscriberOutbox>): Promise<HeldDelivery[]> {
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec<HeldDelivery & Record<string, SqlStorageValue>>(
        'SELECT delivery_id, attempts, due_at, sending_since, retry_delay_sec FROM outbox',
      )
      .toArray(),
  );
}

/**
 * Waits until no outbox of `outboxes` has an attempt out or due now with its gate open (polled every 10 ms,
 * for at most 60 s), then reports each handed-over message as the queue result of the
 * attempt: acked when its outbox no longer holds it (settled), retried with the outbox's
 * delay when it holds it for a later attempt. Messages the consumer did not hand over keep
 * the consumer's own outcome.
 *
 * @param outboxes - from {@link prepareOutboxes}.
 * @param result - what the consumer acked and retried.
 * @throws when an outbox is still busy after 60 s.
 */
export async function settleOutboxes(
  outboxes: readonly OutboxOfMessage[],
  result: QueueResult,
): Promise<QueueResult> {
  const handedOver = outboxes.filter(({ msgId }) => result.explicitAcks.includes(msgId));
  const stubs = [...new Set(handedOver.map(({ stub }) => stub))];
  for (let polls = 0; ; polls++) {
    const now = Date.now();
    const idle = await Promise.all(
      stubs.map(async (stub) => {
        const rows = await heldDeliveries(stub);
        // Due rows wait while the gate (a pause, the rate) is closed.
        const gateClosed = (await gateOpensAt(stub)) > now;
        return rows.every((row) => row.sending_since === null && (row.due_at > now || gateClosed));
      }),
    );
    if (idle.every(Boolean)) break;
    if (polls >= 6000) throw new Error('an outbox is still busy after 60 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const explicitAcks = result.explicitAcks.filter(
    (msgId) => !handedOver.some((outbox) => outbox.msgId === msgId),
  );
  const retryMessages = [...result.retryMessages];
  for (const { msgId, deliveryId, stub } of handedOver) {
    const held = (await heldDeliveries(stub)).find((row) => row.delivery_id === deliveryId);
    if (held === undefined) explicitAcks.push(msgId);
    else retryMessages.push({ msgId, delaySeconds: held.retry_delay_sec ?? 0 });
  }
  const order = (id: string) => Number(id.replace(/\D/g, ''));
  explicitAcks.sort((a, b) => order(a) - order(b));
  retryMessages.sort((a, b) => order(a.msgId) - order(b.msgId));
  return { ...result, explicitAcks, retryMessages };
}

/**
 * Makes every delivery an outbox holds for later due now, runs its alarm (the retry falling
 * due), and waits until the attempts are settled. The outbox gets `workerEnv` (the test
 * settings, loopback subscribers allowed, by default).
 *
 * @returns the rows it still holds afterwards.
 */
export async function retryHeldNow(
  stub: DurableObjectStub<SubscriberOutbox>,
  workerEnv: Env = { ...env, ALLOW_LOCAL_SUBSCRIBERS: 'true' },
): Promise<HeldDelivery[]> {
  await runInDurableObject(stub, (instance, state) => {
    (instance as unknown as { env: Env }).env = workerEnv;
    state.storage.sql.exec('UPDATE outbox SET due_at = ? WHERE sending_since IS NULL', Date.now());
  });
  await runDurableObjectAlarm(stub);
  await settleOutboxes([{ msgId: 'retry', deliveryId: '', stub }], {
    outcome: 'ok',
    ackAll: false,
    retryBatch: { retry: false },
    explicitAcks: ['retry'],
    retryMessages: [],
  });
  return heldDeliveries(stub);
}
