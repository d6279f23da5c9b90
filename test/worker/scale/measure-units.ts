/**
 * The measurements of the load model (`npm run bench -- scale`, bench/scale.ts), run by
 * bench/scale/vitest.config.ts in workerd with the real schema (migrations/ applied to a local
 * D1) and the real Worker: webhooks go through `POST /webhooks`, deliveries through the queue
 * consumer and the subscription outboxes, idempotent POSTs through the proxy to the sandbox.
 * The ingest and the attempt run again with every event stored on a shard other than `DB`,
 * `DB` metered apart (what the subscriptions that stay there cost such an event).
 * Each unit runs many times behind the meters of metered-bindings.ts; the per-unit averages
 * go to the sink of bench/scale/global-setup.ts as JSON. Any answer but the expected one fails
 * the run: a failed case is an error, not a figure. Not a `.test.ts` file: `npm test` skips it.
 */

import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  runDurableObjectAlarm,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, inject, it } from 'vitest';
import { runScheduled } from '../../../worker/cron.ts';
import { forgetSubscriptions } from '../../../worker/db/subscription-cache.ts';
import worker from '../../../worker/index.ts';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { CALLER_NAME, captureLogs, postJson } from '../helpers.ts';
import { execOnKey, findIdempotencyKey, keyStub } from '../idempotency-keys.ts';
import { createReceiverSubscription } from '../relay/delivery-helpers.ts';
import { prepareOutboxes, settleOutboxes } from '../relay/outbox-helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import {
  databaseBytes,
  type Meter,
  meteredDb,
  meteredNamespace,
  meteredQueue,
  newMeter,
  withMeteredFetch,
} from './metered-bindings.ts';
import { meterObjectStorage, newStorageMeter, type StorageMeter } from './object-storage.ts';

/** Repetitions per unit: counts are per-unit averages; sizes need many rows to beat page rounding. */
const SAMPLES = 400;
const POST_SAMPLES = 100;
/** Repetitions per unit with the events on a shard other than `DB` (counts only differ). */
const SHARD_SAMPLES = 100;
/** Old events and expired keys laid out for one cron run to purge (more than one run may). */
const PURGE_BACKLOG = 6000;
const DAY_MS = 86_400_000;
/** Limits far above the load, so the limiter objects are called (as in production) but never refuse. */
const UNREFUSED_LIMIT = '1000000';

/** A webhook body of about 1 KB: a money event's envelope with the fields providers send. */
function eventBody(eventType: string): string {
  const reference = `scale_${crypto.randomUUID()}`;
  return JSON.stringify(
    envelope({
      event_type: eventType,
      data: {
        reference,
        amount: 250000,
        currency: 'NGN',
        status: 'success',
        channel: 'card',
        gateway_response: 'Approved',
        paid_at: '2030-01-01T00:00:00.000Z',
        fees: 3750,
        customer: { email: 'ada.obi@example.com', name: 'Ada Obi', phone: '+2348012345678' },
        authorization: { bin: '408408', last4: '4081', exp_month: '12', exp_year: '2030' },
        metadata: { order_id: `ord_${crypto.randomUUID()}`, cart_id: crypto.randomUUID() },
        narration: 'Order payment, marketplace checkout, two items, standard delivery',
      },
    }),
  );
}

/**
 * The Worker's `fetch`, metered: the round trips answered before the answer (those still in
 * flight when it comes are deferred past it, in `waitUntil`), then the deferred work.
 */
async function callWorker(request: Request, workerEnv: Env, meter: Meter) {
  const ctx = createExecutionContext();
  const incoming = request as Request<unknown, IncomingRequestCfProperties>;
  const start = meter.roundTrips;
  const response = await worker.fetch(incoming, workerEnv, ctx);
  const beforeAnswer = meter.roundTrips - start - meter.inFlight;
  await waitOnExecutionContext(ctx);
  return { response, beforeAnswer };
}

/** A unit's per-sample averages. */
function perUnit(unit: string, meter: Meter, samples: number, extra: Record<string, unknown>) {
  const each = (n: number) => n / samples;
  const objectRequests = Object.fromEntries(
    Object.entries(meter.objectRequests).map(([name, n]) => [name, each(n)]),
  );
  return {
    unit,
    samples,
    statements: each(meter.statements),
    roundTrips: each(meter.roundTrips),
    rowsRead: each(meter.rowsRead),
    rowsWritten: each(meter.rowsWritten),
    queueMessages: each(meter.queueMessages),
    queueSendCalls: each(meter.queueSendCalls),
    objectRequests,
    fetches: each(meter.fetches),
    ...extra,
  };
}

/**
 * Where the measured events are stored: in `DB` (one shard, as deployed by default), or in a
 * shard other than `DB` (`D1_SHARDS` naming only `DB_SHARD_1`, so every event goes there
 * while the subscriptions stay in `DB`): what `DB` still does for such an event is metered
 * apart, the load `DB` carries for the events of every other shard.
 */
type Placement = 'db' | 'other_shard';

/** The metered bindings of one placement: `DB`, and the events' shard when it is another. */
function meteredStorage(placement: Placement) {
  const onDb = newMeter();
  if (placement === 'db') {
    return { onDb, onShard: onDb, events: env.DB, bindings: { DB: meteredDb(onDb) } };
  }
  const onShard = newMeter();
  return {
    onDb,
    onShard,
    events: env.DB_SHARD_1,
    bindings: {
      D1_SHARDS: 'DB_SHARD_1',
      DB: meteredDb(onDb),
      DB_SHARD_1: meteredDb(onShard, env.DB_SHARD_1),
    } as Partial<Env>,
  };
}

/** The `DB` part of a unit measured with its events on another shard. */
function dbPart(unit: string, meter: Meter, samples: number) {
  const { statements, roundTrips, rowsRead, rowsWritten } = perUnit(unit, meter, samples, {});
  return { statements, roundTrips, rowsRead, rowsWritten };
}

/** `subscriptions` matching subscriptions, `samples` new webhooks through the ingress. */
async function measureIngest(subscriptions: number, placement: Placement, samples: number) {
  const eventType = `scale_${subscriptions}_subscriptions_${crypto.randomUUID()}`;
  for (let i = 0; i < subscriptions; i++)
    await createReceiverSubscription({ eventTypes: [eventType] });
  // Created as the admin API would (its isolate forgets its copy of the subscriptions).
  forgetSubscriptions();
  const storage = meteredStorage(placement);
  const meter = storage.onShard;
  const sent: unknown[] = [];
  const workerEnv: Env = {
    ...env,
    ...storage.bindings,
    DELIVERIES: meteredQueue(meter, sent),
    RATE_LIMITER: meteredNamespace(meter, 'RATE_LIMITER', env.RATE_LIMITER),
    WEBHOOK_EVENTS: meteredNamespace(meter, 'WEBHOOK_EVENTS', env.WEBHOOK_EVENTS),
    WEBHOOK_RATE_LIMIT_PER_MINUTE: UNREFUSED_LIMIT,
  };
  const bodies = Array.from({ length: samples }, () => eventBody(eventType));
  let beforeAnswer = 0;
  let bodyBytes = 0;
  const sizeBefore = await databaseBytes(storage.events);
  await withMeteredFetch(meter, async () => {
    for (const body of bodies) {
      bodyBytes += new TextEncoder().encode(body).byteLength;
      const call = await callWorker(await webhookRequest(body), workerEnv, meter);
      const answer = await call.response.text();
      expect(call.response.status, answer).toBe(200);
      expect(JSON.parse(answer)).toMatchObject({ duplicate: false });
      beforeAnswer += call.beforeAnswer;
    }
  });
  const bytesStored = ((await databaseBytes(storage.events)) - sizeBefore) / samples;
  expect(sent).toHaveLength(samples * subscriptions);
  const name = placement === 'db' ? `ingest_${subscriptions}` : `ingest_${subscriptions}_shard`;
  const measured = perUnit(name, meter, samples, {
    bytesStored,
    bodyBytes: bodyBytes / samples,
    roundTripsBeforeAnswer: beforeAnswer / samples,
    ...(placement === 'db' ? {} : { onDb: dbPart(name, storage.onDb, samples) }),
  });
  return { measured, sent };
}

/**
 * One delivery attempt per message, in full batches of the consumer (`max_batch_size`), as
 * they come under load, each batch settled before the next.
 */
async function measureAttempts(messages: readonly unknown[], placement: Placement) {
  const storageMeter = meteredStorage(placement);
  const meter = storageMeter.onShard;
  const storage: StorageMeter = newStorageMeter();
  const workerEnv: Env = {
    ...env,
    ...storageMeter.bindings,
    ALLOW_LOCAL_SUBSCRIBERS: 'true',
    SUBSCRIBER_OUTBOX: meteredNamespace(meter, 'SUBSCRIBER_OUTBOX', env.SUBSCRIBER_OUTBOX),
  };
  const sizeBefore = await databaseBytes(storageMeter.events);
  const batchSize = inject('consumerBatchSize');
  let pendingAlarms = 0;
  await withMeteredFetch(meter, async () => {
    for (let start = 0; start < messages.length; start += batchSize) {
      const bodies = messages.slice(start, start + batchSize);
      const ids = bodies.map((_, index) => `msg-${start + index}`);
      const batch = createMessageBatch(
        DELIVERIES_QUEUE,
        bodies.map((body, index) => ({
          id: ids[index] ?? '',
          timestamp: new Date(),
          attempts: 1,
          body,
        })),
      );
      const outboxes = await prepareOutboxes(batch.messages, workerEnv);
      // One subscription: every message of the batch goes to the same outbox.
      const stubs = [...new Map(outboxes.map(({ stub }) => [stub.id.toString(), stub])).values()];
      expect(stubs).toHaveLength(1);
      expect(outboxes).toHaveLength(bodies.length);
      for (const stub of stubs) await meterObjectStorage(stub, storage);
      const ctx = createExecutionContext();
      await worker.queue(batch, workerEnv, ctx);
      const settled = await settleOutboxes(outboxes, await getQueueResult(batch, ctx));
      expect(settled.explicitAcks).toEqual(ids);
      for (const body of bodies) {
        const deliveryId = (body as { deliveryId: string }).deliveryId;
        const row = await storageMeter.events
          .prepare('SELECT status FROM deliveries WHERE id = ?1')
          .bind(deliveryId)
          .first<{ status: string }>();
        expect(row?.status).toBe('delivered');
      }
      for (const stub of stubs) pendingAlarms += await storage.alarmSet(stub);
    }
  });
  const bytesStored = ((await databaseBytes(storageMeter.events)) - sizeBefore) / messages.length;
  const name = placement === 'db' ? 'attempt' : 'attempt_shard';
  return perUnit(name, meter, messages.length, {
    bytesStored,
    pendingAlarms: pendingAlarms / messages.length,
    outboxStorage: storage.perUnit(messages.length),
    ...(placement === 'db' ? {} : { onDb: dbPart(name, storageMeter.onDb, messages.length) }),
  });
}

/**
 * Idempotent money POSTs through the proxy to the sandbox, then each replayed once, then the
 * expiry of their keys: each key object's storage is metered (its SQLite rows and alarm),
 * and so are the calls to the objects.
 */
async function measurePosts() {
  const keyStorage = newStorageMeter();
  const measure = async (unit: string, requests: readonly Request[], replayed: boolean) => {
    const meter = newMeter();
    const storageBefore = keyStorage.totals();
    const workerEnv: Env = {
      ...env,
      DB: meteredDb(meter),
      RATE_LIMITER: meteredNamespace(meter, 'RATE_LIMITER', env.RATE_LIMITER),
      IDEMPOTENCY_KEYS: meteredNamespace(meter, 'IDEMPOTENCY_KEYS', env.IDEMPOTENCY_KEYS),
      RATE_LIMIT_PER_MINUTE: UNREFUSED_LIMIT,
    };
    let beforeAnswer = 0;
    const sizeBefore = await databaseBytes();
    await withMeteredFetch(meter, async () => {
      for (const request of requests) {
        const call = await callWorker(request, workerEnv, meter);
        expect(call.response.status, await call.response.clone().text()).toBe(200);
        expect(call.response.headers.get('Idempotent-Replayed')).toBe(replayed ? 'true' : null);
        beforeAnswer += call.beforeAnswer;
      }
    });
    const bytesStored = ((await databaseBytes()) - sizeBefore) / requests.length;
    return perUnit(unit, meter, requests.length, {
      bytesStored,
      roundTripsBeforeAnswer: beforeAnswer / requests.length,
      keyStorage: storageDelta(keyStorage, storageBefore, requests.length),
    });
  };
  const posts = Array.from({ length: POST_SAMPLES }, () => ({
    key: crypto.randomUUID(),
    body: {
      customer_name: 'Ada Obi',
      customer_email: 'ada@example.com',
      reference: `scale-${crypto.randomUUID()}`,
      amount: 12.5,
      currency: 'NGN',
      destination_bank_code: '058',
      destination_bank_account: '0123456789',
      destination_bank_name: 'GTBank',
    },
  }));
  for (const { key } of posts)
    await meterObjectStorage(await keyStub(CALLER_NAME, key), keyStorage);
  const request = ({ key, body }: (typeof posts)[number]) =>
    postJson('/disbursements/initialize', body, { headers: { 'Idempotency-Key': key } });
  const first = await measure('post', posts.map(request), false);
  const replay = await measure('post_replay', posts.map(request), true);
  return [first, replay, await measureKeyExpiry(posts, keyStorage)];
}

/** The rows and bytes a stored key keeps, and what its expiry (the object's alarm) writes. */
async function measureKeyExpiry(posts: readonly { key: string }[], keyStorage: StorageMeter) {
  let bytesKept = 0;
  for (const { key } of posts) {
    const [row] = await execOnKey(
      CALLER_NAME,
      key,
      `SELECT length(caller) + length(idempotency_key) + length(fingerprint) +
         length(response_headers) + length(response_body) + 5 * 8 AS bytes
       FROM idempotency_keys WHERE caller = ? AND idempotency_key = ?`,
      CALLER_NAME,
      key,
    );
    bytesKept += Number(row?.bytes ?? 0);
    // Its retention over: the next alarm of its object deletes it.
    await execOnKey(
      CALLER_NAME,
      key,
      'UPDATE idempotency_keys SET expires_at = ? WHERE caller = ? AND idempotency_key = ?',
      Date.now() - 1,
      CALLER_NAME,
      key,
    );
  }
  const before = keyStorage.totals();
  const stubs = new Map<string, DurableObjectStub>();
  for (const { key } of posts) {
    const stub = await keyStub(CALLER_NAME, key);
    stubs.set(stub.id.toString(), stub);
  }
  for (const stub of stubs.values()) await runDurableObjectAlarm(stub);
  for (const { key } of posts) {
    expect(await findIdempotencyKey(CALLER_NAME, key)).toBeUndefined();
  }
  return {
    unit: 'key_expiry',
    samples: posts.length,
    bytesKept: bytesKept / posts.length,
    objectsWoken: stubs.size / posts.length,
    keyStorage: storageDelta(keyStorage, before, posts.length),
  };
}

/**
 * What a storage meter counted since `before` (its totals then), per sample: rows, and the
 * alarms set apart (a key object sets its alarm once per sweep, whatever its keys: the model
 * spreads those writes over the keys of a sweep at the traffic it prices).
 */
function storageDelta(
  meter: StorageMeter,
  before: ReturnType<StorageMeter['totals']>,
  samples: number,
) {
  const now = meter.totals();
  return {
    rowsRead: (now.rowsRead - before.rowsRead) / samples,
    rowsWritten: (now.rowsWritten - before.rowsWritten) / samples,
    alarmWrites: (now.alarmWrites - before.alarmWrites) / samples,
    metered: meter.cursors.length > 0,
  };
}

/** Copies one row of `table` `count` times with `overrides` (column: SQL over `e.` and `n.i`). */
async function copyRows(
  table: string,
  where: string,
  count: number,
  overrides: Record<string, string>,
) {
  const info = await env.DB.prepare(`PRAGMA table_info(${table})`).all<{ name: string }>();
  const columns = info.results.map(({ name }) => name);
  const values = columns.map((column) => overrides[column] ?? `e.${column}`);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
     INSERT INTO ${table} (${columns.join(', ')})
     SELECT ${values.join(', ')} FROM ${table} e, n WHERE ${where}`,
  ).run();
}

/**
 * What one cron run purges of a backlog of old events, and the rows its deletes write. (The
 * backlog is events alone: their deliveries and attempts, which the purge deletes with them,
 * are not laid out, so the rows written are a floor.)
 */
async function measurePurge() {
  const now = Date.now();
  const old = now - 400 * DAY_MS;
  const event = await env.DB.prepare('SELECT event_id FROM webhook_events LIMIT 1').first<{
    event_id: string;
  }>();
  if (event === null) throw new Error('the purge needs a stored event to copy');
  await copyRows('webhook_events', `e.event_id = '${event.event_id}'`, PURGE_BACKLOG, {
    event_id: `e.event_id || '_old_' || n.i`,
    received_at: String(old),
  });
  const count = async (sql: string) => (await env.DB.prepare(sql).first<{ n: number }>())?.n ?? 0;
  const oldEvents = `SELECT COUNT(*) AS n FROM webhook_events WHERE event_id LIKE '%\\_old\\_%' ESCAPE '\\'`;
  const eventsBefore = await count(oldEvents);
  expect(eventsBefore).toBe(PURGE_BACKLOG);
  const meter = newMeter();
  const workerEnv: Env = { ...env, DB: meteredDb(meter), DELIVERIES: meteredQueue(meter, []) };
  await runScheduled(
    createScheduledController({ scheduledTime: now, cron: '*/15 * * * *' }),
    workerEnv,
  );
  return {
    unit: 'cron_run',
    eventsPurged: eventsBefore - (await count(oldEvents)),
    statements: meter.statements,
    roundTrips: meter.roundTrips,
    rowsWritten: meter.rowsWritten,
  };
}

it('measures the units of the load model', { timeout: 600_000 }, async () => {
  captureLogs();
  const units: unknown[] = [];
  for (const placement of ['db', 'other_shard'] as const) {
    // Events on another shard: fewer samples, their counts are what differs (sizes are the same rows).
    const samples = placement === 'db' ? SAMPLES : SHARD_SAMPLES;
    let attemptsOf: unknown[] = [];
    for (const subscriptions of [0, 1, 3]) {
      const { measured, sent } = await measureIngest(subscriptions, placement, samples);
      units.push(measured);
      if (subscriptions === 1) attemptsOf = sent;
    }
    units.push(await measureAttempts(attemptsOf, placement));
  }
  units.push(...(await measurePosts()));
  units.push(await measurePurge());
  const res = await fetch(inject('scaleSinkUrl'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ units }),
  });
  expect(res.status).toBe(204);
});
