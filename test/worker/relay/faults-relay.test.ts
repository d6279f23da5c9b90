/**
 * The webhook relay when D1 or Queues fail: at ingress (the event insert, the delivery
 * rows, the enqueue), in the consumer (reading a delivery, recording an attempt, marking
 * a dead letter) and in the sweeper. The real Worker runs on the real D1 and the real
 * DELIVERIES producer, wrapped by `faultyD1` / `faultyQueue`; deliveries go to the
 * recording receiver. Every event is of a type only its own subscription takes. The
 * sweeper runs at the real time on deliveries moved back past the grace period, so it
 * never claims another file's fresh deliveries.
 */
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { runScheduled } from '../../../worker/cron.ts';
import {
  type DeliveryRecord,
  findDelivery,
  listEventDeliveries,
} from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { SWEEP_GRACE_MS } from '../../../worker/relay/sweeper.ts';
import { type FaultyQueue, faultyD1, faultyQueue } from '../fault-bindings.ts';
import { errorBody, fetchGateway, uniqueRequestId, useCapturedLogs } from '../helpers.ts';
import { envelope, rowCount, webhookRequest } from '../routes/webhook-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  type ReceiverSubscription,
  receivedUnder,
  runQueue,
  storeDelivery,
} from './delivery-helpers.ts';
import { outboxOf, retryHeldNow } from './outbox-helpers.ts';

const logs = useCapturedLogs();
afterEach(disableTestSubscriptions);

const EVENT_INSERT = /INSERT INTO webhook_events/;
const DELIVERIES_INSERT = /INSERT INTO deliveries/;
const ATTEMPT_INSERT = /INSERT INTO delivery_attempts/;
const DELIVERY_READ = /SELECT \* FROM deliveries WHERE id/;
const MARK_FAILED = /SET status = 'failed'/;
const SWEEP_CLAIM = /UPDATE deliveries SET next_attempt_at = \?2/;

/** An event of a fresh type with one subscription taking it, and its raw body. */
async function newEvent(): Promise<TestEvent> {
  const eventType = `fault_${crypto.randomUUID()}`;
  const subscription = await createReceiverSubscription({ eventTypes: [eventType] });
  const event = envelope({ event_type: eventType });
  return { ...subscription, eventId: String(event.event_id), rawBody: JSON.stringify(event) };
}

/** POSTs the event to the ingress as the provider does (a retry is a new signature). */
async function ingest(rawBody: string, overrides: Partial<Env> = {}): Promise<Response> {
  return fetchGateway(await webhookRequest(rawBody), overrides);
}

/** An event and the subscription made for it. */
type TestEvent = Pick<ReceiverSubscription, 'subscription' | 'key'> & {
  eventId: string;
  rawBody: string;
};

/** The one delivery of the event to its own subscription. */
async function deliveryOf(event: TestEvent): Promise<DeliveryRecord> {
  const deliveries = (await listEventDeliveries(env.DB, event.eventId)).filter(
    (delivery) => delivery.subscriptionId === event.subscription.id,
  );
  expect(deliveries).toHaveLength(1);
  const [delivery] = deliveries;
  if (delivery === undefined) throw new Error(`no delivery of ${event.eventId}`);
  return delivery;
}

/** Runs the consumer on the messages `queue` passed on for `deliveryId` (no one else's). */
async function consume(queue: FaultyQueue, deliveryId: string): Promise<void> {
  const ours = queue.sent.filter(
    (body) => (body as { deliveryId?: unknown }).deliveryId === deliveryId,
  );
  expect(ours).toEqual([{ deliveryId, subscriptionId: expect.any(String) }]);
  const result = await runQueue(DELIVERIES_QUEUE, [{ body: ours[0] }]);
  expect(result.explicitAcks).toEqual(['msg-0']);
}

/** Moves an event's deliveries back past the sweeper's grace period (time passing). */
async function makeOverdue(eventId: string): Promise<void> {
  const past = Date.now() - SWEEP_GRACE_MS - 60_000;
  await env.DB.prepare(
    'UPDATE deliveries SET created_at = ?2, next_attempt_at = ?2 WHERE event_id = ?1',
  )
    .bind(eventId, past)
    .run();
}

/** The cron trigger at the real time with the given bindings. */
function sweep(overrides: Partial<Env>): Promise<void> {
  return runScheduled(createScheduledController({ scheduledTime: Date.now() }), {
    ...env,
    ...overrides,
  });
}

/** Checks the subscriber got the event exactly `times` times, and the delivery is settled. */
async function expectDelivered(event: TestEvent, times = 1): Promise<void> {
  const received = await receivedUnder(event.key);
  expect(received.map((r) => r.body)).toEqual(Array(times).fill(event.rawBody));
  expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.eventId]));
  expect((await deliveryOf(event)).status).toBe('delivered');
}

describe('webhook relay under faults', () => {
  describe('ingress', () => {
    it('should answer 500 and store nothing when the event insert fails, then deliver after the provider retries', async () => {
      const event = await newEvent();
      const db = faultyD1(env.DB, { failOn: EVENT_INSERT });
      const queue = faultyQueue(env.DELIVERIES);
      const id = uniqueRequestId();
      const request = await webhookRequest(event.rawBody);
      request.headers.set('X-Request-Id', id);
      const first = await fetchGateway(request, { DB: db, DELIVERIES: queue });
      expect(first.status).toBe(500);
      expect(await errorBody(first)).toMatchObject({ code: 'internal_error', request_id: id });
      expect(db.injected).toBe(1);
      expect(await rowCount(event.eventId)).toBe(0);
      expect(queue.sent).toEqual([]);
      const retry = await ingest(event.rawBody, { DELIVERIES: queue });
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ duplicate: false });
      await consume(queue, (await deliveryOf(event)).id);
      await expectDelivered(event);
    });

    it('should answer 500 and store neither event nor deliveries when the delivery rows insert fails', async () => {
      const event = await newEvent();
      const db = faultyD1(env.DB, { failOn: DELIVERIES_INSERT });
      const first = await ingest(event.rawBody, { DB: db });
      expect(first.status).toBe(500);
      expect((await errorBody(first)).code).toBe('internal_error');
      expect(db.injected).toBe(1);
      // One transaction: a stored event without its deliveries would never be delivered.
      expect(await rowCount(event.eventId)).toBe(0);
      expect(await listEventDeliveries(env.DB, event.eventId)).toEqual([]);
      const queue = faultyQueue(env.DELIVERIES);
      expect((await ingest(event.rawBody, { DELIVERIES: queue })).status).toBe(200);
      await consume(queue, (await deliveryOf(event)).id);
      await expectDelivered(event);
    });

    it('should deliver through the sweeper when the insert committed but its answer was lost', async () => {
      const event = await newEvent();
      const db = faultyD1(env.DB, { failOn: EVENT_INSERT, when: 'after' });
      const first = await ingest(event.rawBody, { DB: db });
      expect(first.status).toBe(500);
      expect(await rowCount(event.eventId)).toBe(1);
      // The provider's retry is a duplicate: it enqueues nothing.
      const queue = faultyQueue(env.DELIVERIES);
      const retry = await ingest(event.rawBody, { DELIVERIES: queue });
      expect(await retry.json()).toMatchObject({ duplicate: true });
      expect(queue.sent).toEqual([]);
      const delivery = await deliveryOf(event);
      expect(delivery.status).toBe('pending');
      await makeOverdue(event.eventId);
      await sweep({ DELIVERIES: queue });
      await consume(queue, delivery.id);
      await expectDelivered(event);
    });

    it('should answer 200 when the enqueue fails after the event is stored, and deliver through the sweeper', async () => {
      const event = await newEvent();
      const failing = faultyQueue(env.DELIVERIES, { failOn: 'sendBatch' });
      const res = await ingest(event.rawBody, { DELIVERIES: failing });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        status: 'success',
        event_id: event.eventId,
        duplicate: false,
      });
      expect(failing.injected).toBe(1);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'delivery_enqueue_failed', deliveries: 1 }),
      );
      const delivery = await deliveryOf(event);
      expect(delivery.status).toBe('pending');
      await makeOverdue(event.eventId);
      const queue = faultyQueue(env.DELIVERIES);
      await sweep({ DELIVERIES: queue });
      await consume(queue, delivery.id);
      await expectDelivered(event);
    });

    it('should deliver through the sweeper when the Worker stopped between the D1 write and the enqueue', async () => {
      const event = await newEvent();
      const lost = faultyQueue(env.DELIVERIES, { mode: 'lose' });
      expect((await ingest(event.rawBody, { DELIVERIES: lost })).status).toBe(200);
      expect(lost.injected).toBe(1);
      expect(lost.sent).toEqual([]);
      await makeOverdue(event.eventId);
      const queue = faultyQueue(env.DELIVERIES);
      await sweep({ DELIVERIES: queue });
      await consume(queue, (await deliveryOf(event)).id);
      await expectDelivered(event);
    });
  });

  describe('consumer', () => {
    it('should retry the message when reading the delivery fails, sending nothing', async () => {
      const stored = await storeDelivery();
      const db = faultyD1(env.DB, { failOn: DELIVERY_READ });
      const result = await runQueue(
        DELIVERIES_QUEUE,
        [{ body: { deliveryId: stored.deliveryId } }],
        {
          DB: db,
        },
      );
      expect(db.injected).toBe(1);
      expect(result.retryMessages).toEqual([{ msgId: 'msg-0', delaySeconds: expect.any(Number) }]);
      expect(await receivedUnder(stored.key)).toEqual([]);
      const again = await runQueue(DELIVERIES_QUEUE, [
        { body: { deliveryId: stored.deliveryId }, attempts: 2 },
      ]);
      expect(again.explicitAcks).toEqual(['msg-0']);
      await expectDelivered(stored);
    });

    it('should retry when recording a successful attempt fails, and the subscriber gets the same webhook-id again', async () => {
      const stored = await storeDelivery();
      const db = faultyD1(env.DB, { failOn: ATTEMPT_INSERT });
      const message = { body: { deliveryId: stored.deliveryId } };
      const result = await runQueue(DELIVERIES_QUEUE, [message], { DB: db });
      expect(db.injected).toBe(1);
      expect(result.retryMessages).toEqual([{ msgId: 'msg-0', delaySeconds: expect.any(Number) }]);
      // Sent, but not recorded: still pending, so the retry is not lost.
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'pending',
        attempts: 0,
      });
      // The subscription's outbox holds the retry; it falls due.
      expect(await retryHeldNow(outboxOf(stored.subscription.id))).toEqual([]);
      // At least once: the subscriber deduplicates by webhook-id.
      await expectDelivered(stored, 2);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 200 },
      ]);
    });

    it('should not send again when the attempt was recorded before D1 failed', async () => {
      const stored = await storeDelivery();
      const db = faultyD1(env.DB, { failOn: ATTEMPT_INSERT, when: 'after' });
      const message = { body: { deliveryId: stored.deliveryId } };
      const result = await runQueue(DELIVERIES_QUEUE, [message], { DB: db });
      expect(result.retryMessages).toHaveLength(1);
      // The outbox's retry finds the delivery settled and lets it go, sending nothing.
      expect(await retryHeldNow(outboxOf(stored.subscription.id))).toEqual([]);
      await expectDelivered(stored, 1);
    });

    it('should retry a dead letter whose failed mark did not land, and mark it on the next run', async () => {
      const stored = await storeDelivery();
      const db = faultyD1(env.DB, { failOn: MARK_FAILED });
      const message = { body: { deliveryId: stored.deliveryId } };
      const result = await runQueue(DELIVERIES_DEAD_LETTER_QUEUE, [message], { DB: db });
      expect(db.injected).toBe(1);
      expect(result.retryMessages).toHaveLength(1);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('pending');
      const again = await runQueue(DELIVERIES_DEAD_LETTER_QUEUE, [{ ...message, attempts: 2 }]);
      expect(again.explicitAcks).toEqual(['msg-0']);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('failed');
    });
  });

  describe('sweeper', () => {
    it('should re-enqueue on a later run when its enqueue fails', async () => {
      const stored = await storeDelivery();
      await makeOverdue(stored.eventId);
      const failing = faultyQueue(env.DELIVERIES, { failOn: 'sendBatch' });
      await expect(sweep({ DELIVERIES: failing })).rejects.toThrow(/injected fault/);
      expect(failing.injected).toBe(1);
      // Claimed (due now) but not sent: the next run after the grace period sends it.
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('pending');
      await makeOverdue(stored.eventId);
      const queue = faultyQueue(env.DELIVERIES);
      await sweep({ DELIVERIES: queue });
      await consume(queue, stored.deliveryId);
      await expectDelivered(stored);
    });

    it('should re-enqueue on a later run when its D1 claim fails', async () => {
      const stored = await storeDelivery();
      await makeOverdue(stored.eventId);
      const db = faultyD1(env.DB, { failOn: SWEEP_CLAIM });
      const untouched = faultyQueue(env.DELIVERIES);
      await expect(sweep({ DB: db, DELIVERIES: untouched })).rejects.toThrow(/D1_ERROR/);
      expect(untouched.sent).toEqual([]);
      const queue = faultyQueue(env.DELIVERIES);
      await sweep({ DELIVERIES: queue });
      await consume(queue, stored.deliveryId);
      await expectDelivered(stored);
    });
  });
});
