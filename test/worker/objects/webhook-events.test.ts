/**
 * The webhook events' Durable Object (worker/objects/webhook-events.ts) on the real objects
 * and D1 databases of workerd: copies of one event racing, through the real ingress and
 * straight to the object with the placements isolates on either side of a change of shards
 * compute; copies arriving while the first write waits (held at a gate); a first write that
 * fails; and a copy of an event already in D1.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { eventBucketName } from '../../../worker/objects/buckets.ts';
import type { WebhookEvents } from '../../../worker/objects/webhook-events.ts';
import type { EventPlacementNames, EventWrite } from '../../../worker/relay/event-store.ts';
import { writeWebhookEvent } from '../../../worker/relay/event-store.ts';
import { deliveriesIn, holdersOf, ingest } from '../event-shards/event-shard-helpers.ts';
import { faultyD1 } from '../fault-bindings.ts';
import { useCapturedLogs } from '../helpers.ts';
import { heldD1 } from '../proxy/held-d1.ts';
import { createReceiverSubscription } from '../relay/delivery-helpers.ts';
import { envelope } from '../routes/webhook-helpers.ts';

useCapturedLogs();

const INSERT = /INSERT INTO webhook_events/;
/** Placed by an isolate whose clock is before a generation's start, and by one after it. */
const OLD_GENERATION: EventPlacementNames = { home: 'DB', others: ['DB_SHARD_1'] };
const NEW_GENERATION: EventPlacementNames = { home: 'DB_SHARD_1', others: ['DB'] };

async function subscribedType(): Promise<{ type: string; subscriptionId: string }> {
  const type = `test_${crypto.randomUUID()}`;
  const { subscription } = await createReceiverSubscription({ eventTypes: [type] });
  return { type, subscriptionId: subscription.id };
}

function eventWrite(eventId: string, type: string): EventWrite {
  const rawBody = JSON.stringify(envelope({ event_id: eventId, event_type: type }));
  return {
    event: { eventId, eventType: type, receivedAt: Date.now(), reference: null, rawBody },
    status: 'received',
    confirmation: { reason: null, checks: 0, checkedAt: null, nextCheckAt: null },
    fansOut: true,
  };
}

/**
 * Runs `work` in the object receiving `eventId`, its `DB` held at a gate for the statements
 * matching `hold` (over the D1 `real` makes of its own): the gate's promises must live in
 * the object that awaits them, so the copies are the object's own calls, made there.
 */
async function inObject<T>(
  eventId: string,
  hold: RegExp,
  real: (own: Env) => D1Database,
  work: (object: WebhookEvents, gate: ReturnType<typeof heldD1>) => Promise<T>,
): Promise<T> {
  return runInDurableObject(await eventsStub(eventId), async (object: WebhookEvents) => {
    const self = object as unknown as { env: Env };
    const own = self.env;
    const gate = heldD1(hold, real(own));
    self.env = { ...own, DB: gate };
    try {
      return await work(object, gate);
    } finally {
      self.env = own;
    }
  });
}

/** The object receiving `eventId`, on the real namespace. */
async function eventsStub(eventId: string) {
  return env.WEBHOOK_EVENTS.getByName(await eventBucketName(eventId));
}

/** One copy handed to the event's object as the ingress hands it. */
async function receive(eventId: string, type: string, placement: EventPlacementNames) {
  const stub = await eventsStub(eventId);
  return stub.receive(eventWrite(eventId, type), placement);
}

/** Whether `promise` is still pending after the other work queued so far has run. */
async function stillPending(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  const first = await Promise.race([
    promise.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((resolve) => setTimeout(() => resolve(pending), 100)),
  ]);
  return first === pending;
}

describe('webhook events received through their object', () => {
  // One generation: every copy is placed in DB, whose primary key keeps all but the first
  // out (the ingress writes itself). Two: the copies go through the event's object.
  const SETTINGS = {
    'one generation of shards': 'DB',
    'two generations, the second started an hour ago': () =>
      `DB; ${new Date(Date.now() - 3_600_000).toISOString()}=DB,DB_SHARD_1,DB_SHARD_2`,
  };
  describe.each(Object.entries(SETTINGS))('with %s', (_, shards) => {
    it.each([2, 3, 10])(
      'should store, fan out and enqueue an event once when %i copies race through the ingress',
      async (copies) => {
        const { type, subscriptionId } = await subscribedType();
        const id = `evt_${crypto.randomUUID()}`;
        const setting = typeof shards === 'string' ? shards : shards();
        const answers = await Promise.all(
          Array.from({ length: copies }, () => ingest(setting, id, type)),
        );
        expect(answers.map((answer) => answer.status)).toEqual(Array(copies).fill(200));
        expect(answers.filter((answer) => answer.body.duplicate === false)).toHaveLength(1);
        const holders = await holdersOf(id);
        expect(holders).toHaveLength(1);
        const deliveries = await deliveriesIn(holders[0] ?? 'DB', id);
        expect(deliveries.map((delivery) => delivery.subscription_id)).toEqual([subscriptionId]);
        expect(answers.flatMap((answer) => answer.messages).map((m) => m.deliveryId)).toEqual([
          deliveries[0]?.id,
        ]);
      },
    );
  });

  it.each([2, 3, 10])(
    'should store an event once when %i copies placed on both sides of a change of shards race',
    async (copies) => {
      const { type } = await subscribedType();
      const id = `evt_${crypto.randomUUID()}`;
      // The first copy's write waits at the gate while every other copy arrives.
      const answers = await inObject(
        id,
        INSERT,
        (own) => own.DB,
        async (object, gate) => {
          const first = object.receive(eventWrite(id, type), OLD_GENERATION);
          await gate.held;
          const others = Array.from({ length: copies - 1 }, (_, index) =>
            object.receive(eventWrite(id, type), index % 2 === 0 ? NEW_GENERATION : OLD_GENERATION),
          );
          // No copy is answered before the event is kept: the provider would hold a 200 for
          // an event stored nowhere.
          for (const copy of others) expect(await stillPending(copy)).toBe(true);
          gate.release('land');
          return Promise.all([first, ...others]);
        },
      );
      expect(answers[0]).toMatchObject({ kind: 'stored', shard: 'DB', deliveries: [{}] });
      expect(answers.slice(1)).toEqual(Array(copies - 1).fill({ kind: 'duplicate', shard: 'DB' }));
      expect(await holdersOf(id)).toEqual(['DB']);
      expect(await deliveriesIn('DB', id)).toHaveLength(1);
      expect(await deliveriesIn('DB_SHARD_1', id)).toEqual([]);
    },
  );

  it('should write a waiting copy in the place of a first write that failed', async () => {
    const { type } = await subscribedType();
    const id = `evt_${crypto.randomUUID()}`;
    const faulty = (own: Env) => faultyD1(own.DB, { failOn: INSERT });
    const [first, second] = await inObject(id, INSERT, faulty, async (object, gate) => {
      const failing = object.receive(eventWrite(id, type), OLD_GENERATION);
      await gate.held;
      const waiting = object.receive(eventWrite(id, type), OLD_GENERATION);
      expect(await stillPending(waiting)).toBe(true);
      gate.release('land');
      return Promise.allSettled([failing, waiting]);
    });
    expect(first?.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { kind: 'stored', shard: 'DB' } });
    expect(await deliveriesIn('DB', id)).toHaveLength(1);
  });

  it('should answer a copy as a duplicate when the event is in D1 already, in either generation', async () => {
    const { type } = await subscribedType();
    const id = `evt_${crypto.randomUUID()}`;
    // Written by a copy whose object stopped since (nothing of it left in memory).
    await writeWebhookEvent(env, OLD_GENERATION, eventWrite(id, type));
    // A copy placed after a generation started finds it in the old shard; one placed in
    // the same shard finds its row there.
    expect(await receive(id, type, NEW_GENERATION)).toEqual({ kind: 'duplicate', shard: 'DB' });
    expect(await receive(id, type, OLD_GENERATION)).toEqual({ kind: 'duplicate', shard: 'DB' });
    expect(await holdersOf(id)).toEqual(['DB']);
    expect(await deliveriesIn('DB', id)).toHaveLength(1);
    expect(await deliveriesIn('DB_SHARD_1', id)).toEqual([]);
  });
});
