import { describe, expect, it } from 'vitest';
import {
  eventsPurgedPerRun,
  type ModelOptions,
  type Platform,
  runModel,
} from '../../bench/scale/model.ts';
import { scaleLine, TARGET_100M } from '../../bench/scale/summary.ts';
import { targetConfiguration, VOLUMES, volumeTable } from '../../bench/scale/table.ts';
import { solveTarget } from '../../bench/scale/target.ts';
import {
  type DbPart,
  type Measured,
  parseMeasured,
  type ShardUnitMeasure,
  type UnitMeasure,
} from '../../bench/scale/units.ts';

// Round figures, so every expected value below is worked out by hand.
const PLATFORM: Platform = {
  d1DatabaseBytes: 10e9,
  d1QueriesPerSecond: 1000,
  queueMessagesPerSecond: 5000,
  objectRequestsPerSecond: 1000,
  objectStorageBytes: 10e9,
  price: {
    workersRequest: 0.3 / 1e6,
    workersCpuMs: 0.02 / 1e6,
    d1RowRead: 0.001 / 1e6,
    d1RowWritten: 1 / 1e6,
    d1GbMonth: 0.75,
    queueOperation: 0.4 / 1e6,
    objectRequest: 0.15 / 1e6,
    objectGbSecond: 12.5 / 1e6,
    objectRowRead: 0.001 / 1e6,
    objectRowWritten: 1 / 1e6,
    objectGbMonth: 0.2,
  },
  queueOperationsPerMessage: 3,
  objectBilledGb: 0.128,
};

const OPTIONS: ModelOptions = {
  shards: 1,
  retentionDays: 30,
  idempotencyRetentionSec: 86_400,
  subscriptionsPerEvent: 1,
  consumerBatchSize: 10,
  cronRunsPerDay: 96,
  limiterPerObjectPerMinute: 30_000,
  assumed: {
    cpuMsPerInvocation: 0,
    outboxActiveMsPerDelivery: 0,
    limiterActiveMs: 0,
    keyObjectActiveMs: 0,
    consumerInvocationMs: 1000,
  },
};

function unit(name: string, fields: Partial<UnitMeasure>): UnitMeasure {
  return {
    unit: name,
    samples: 10,
    statements: 0,
    roundTrips: 0,
    rowsRead: 0,
    rowsWritten: 0,
    bytesStored: 0,
    queueMessages: 0,
    queueSendCalls: 0,
    objectRequests: {},
    fetches: 0,
    ...fields,
  };
}

const onDb = (statements: number, rowsWritten = 0): DbPart => ({
  statements,
  roundTrips: statements,
  rowsRead: 0,
  rowsWritten,
});

function shardUnit(name: string, fields: Partial<UnitMeasure>, db: DbPart): ShardUnitMeasure {
  return { ...unit(name, fields), onDb: db };
}

// An event: 2 queries, 1 limiter request, 1,500 bytes and 6 rows written, plus per
// subscription 1 query, 1 message, 500 bytes and 4 rows written at ingest; an attempt: 3
// queries, 1,000 bytes, 5 rows written, 1 outbox request and 2 outbox rows written.
const MEASURED: Measured = {
  ingest: {
    0: unit('ingest_0', {
      statements: 2,
      rowsWritten: 6,
      bytesStored: 1500,
      objectRequests: { RATE_LIMITER: 1 },
    }),
    1: unit('ingest_1', {
      statements: 3,
      rowsWritten: 10,
      bytesStored: 2000,
      queueMessages: 1,
      objectRequests: { RATE_LIMITER: 1, WEBHOOK_EVENTS: 1 },
    }),
    3: unit('ingest_3', {
      statements: 5,
      rowsWritten: 18,
      bytesStored: 3000,
      queueMessages: 3,
      objectRequests: { RATE_LIMITER: 1 },
    }),
  },
  attempt: unit('attempt', {
    statements: 3,
    rowsRead: 4,
    rowsWritten: 5,
    bytesStored: 1000,
    objectRequests: { SUBSCRIBER_OUTBOX: 1 },
    outboxStorage: { rowsRead: 0, rowsWritten: 2, metered: true },
  }),
  // A POST: no D1 query; 2 requests to its key object, which writes 2 rows, and later 1
  // more to expire the key, which keeps 1,000 bytes until then.
  post: unit('post', {
    objectRequests: { RATE_LIMITER: 1, IDEMPOTENCY_KEYS: 2 },
    keyStorage: { rowsRead: 2, rowsWritten: 2, alarmWrites: 1, metered: true },
  }),
  postReplay: unit('post_replay', { objectRequests: { RATE_LIMITER: 1, IDEMPOTENCY_KEYS: 1 } }),
  keyExpiry: {
    unit: 'key_expiry',
    samples: 10,
    bytesKept: 1000,
    keyStorage: { rowsRead: 4, rowsWritten: 1, alarmWrites: 0, metered: true },
  },
  purge: { unit: 'cron_run', eventsPurged: 5000, statements: 22, roundTrips: 22 },
  // On a shard other than DB: the same ingest there and 1 query in DB (the subscriptions'
  // snapshot); an attempt 1 query there and 2 in DB (its subscription, its health).
  otherShard: {
    ingest: {
      0: shardUnit('ingest_0_shard', { statements: 2, rowsWritten: 6 }, onDb(1)),
      1: shardUnit('ingest_1_shard', { statements: 3, rowsWritten: 10 }, onDb(1)),
      3: shardUnit('ingest_3_shard', { statements: 5, rowsWritten: 18 }, onDb(1)),
    },
    attempt: shardUnit('attempt_shard', { statements: 1, rowsWritten: 4 }, onDb(2, 1)),
  },
};

const ceiling = (shards: number, name: string) => {
  const found = runModel(MEASURED, PLATFORM, { ...OPTIONS, shards }).ceilings.find((c) =>
    c.name.startsWith(name),
  );
  if (found === undefined) throw new Error(`no ceiling ${name}`);
  return found;
};

describe('load model', () => {
  it('should meet the D1 size limit at the bytes an event keeps for its retention', () => {
    // (2,000 + 1,000) bytes per event for 30 days in 10 GB; keys are not in D1.
    expect(ceiling(1, 'D1 size').eventsPerDay).toBeCloseTo(10e9 / (3000 * 30), 6);
    expect(ceiling(1, 'D1 size').postsPerSecond).toBeNull();
  });

  it("should meet the key objects' limits at a POST's requests and the bytes a key keeps", () => {
    // 256 objects of 1,000 requests/s, 2 requests per POST; of 10 GB, 1,000 B for 86,400 s.
    expect(ceiling(1, 'Idempotency key objects, request rate').postsPerSecond).toBe(128_000);
    expect(ceiling(1, 'Idempotency key objects, storage').postsPerSecond).toBeCloseTo(
      (256 * 10e9) / (1000 * 86_400),
      6,
    );
    expect(ceiling(1, 'Idempotency key objects, storage').eventsPerDay).toBeNull();
    // Not on D1: the shards change nothing.
    expect(ceiling(7, 'Idempotency key objects, request rate').postsPerSecond).toBe(128_000);
  });

  it('should meet the D1 query rate at the queries of an event and its attempts', () => {
    // 3 at ingest + 3 per attempt: 6 queries per event; none per POST.
    expect(ceiling(1, 'D1 query rate of a shard').eventsPerDay).toBeCloseTo((1000 * 86_400) / 6, 6);
    expect(ceiling(1, 'D1 query rate of a shard').postsPerSecond).toBeNull();
    expect(ceiling(1, 'D1 query rate of DB').eventsPerDay).toBeCloseTo((1000 * 86_400) / 6, 6);
  });

  it("should load DB with the subscriptions' queries of every event, whatever the shards", () => {
    // 3 shards: 1 event in 3 in DB (6 queries), 2 in 3 elsewhere (1 + 2 in DB): 4 a event.
    expect(ceiling(3, 'D1 query rate of DB').eventsPerDay).toBeCloseTo((1000 * 86_400) / 4, 6);
    expect(ceiling(3, 'D1 query rate of DB').perShard).toBe(false);
    // Many shards: toward 3 queries in DB per event, never more events than 1000/3 a second.
    expect(ceiling(1000, 'D1 query rate of DB').eventsPerDay).toBeLessThan((1000 * 86_400) / 3);
    expect(ceiling(1000, 'D1 query rate of DB').eventsPerDay).toBeGreaterThan(
      (1000 * 86_400) / 3.01,
    );
    // Another shard's own: 3 at ingest + 1 per attempt, so its thread carries 4 per event.
    expect(ceiling(3, 'D1 query rate of a shard').eventsPerDay).toBeCloseTo(
      (3 * 1000 * 86_400) / 4,
      6,
    );
    // Every query counted once: 2/3 x (4 + 3) + 1/3 x 6 per event, 6 2/3.
    const model = runModel(MEASURED, PLATFORM, { ...OPTIONS, shards: 3 });
    expect(model.event.d1Statements).toBeCloseTo(20 / 3, 9);
    // Rows written: 2/3 x (10 + 4 + 1) + 1/3 x 15.
    expect(model.event.d1RowsWritten).toBeCloseTo(15, 9);
  });

  it("should multiply the D1 size and a shard's query rate by the shards, and leave the single objects and the queue alone", () => {
    expect(ceiling(3, 'D1 size').eventsPerDay).toBeCloseTo(
      3 * (ceiling(1, 'D1 size').eventsPerDay ?? 0),
      6,
    );
    for (const name of ['Queue throughput', 'Outbox object']) {
      expect(ceiling(3, name).eventsPerDay).toBe(ceiling(1, name).eventsPerDay);
      expect(ceiling(3, name).postsPerSecond).toBe(ceiling(1, name).postsPerSecond);
    }
    // A sender's limit above one limiter object's share is spread over more objects: no ceiling.
    expect(ceiling(8, 'Limiter objects').postsPerSecond).toBeNull();
    expect(ceiling(8, 'Limiter objects').eventsPerDay).toBeNull();
    expect(ceiling(1, 'Queue throughput').eventsPerDay).toBe(5000 * 86_400);
  });

  it('should bound the event purge by the statements one cron run gives each shard', () => {
    expect(ceiling(1, 'Retention purge of events').eventsPerDay).toBe(5000 * 96);
    expect(ceiling(3, 'Retention purge of events').eventsPerDay).toBe(3 * 5000 * 96);
    // worker/cron-budget.ts plans 10 statements a shard up to 42 shards, 9 at 43, 3 at 90, for
    // keys and for events alike; with no key purge the events get both shares, at most 10.
    expect(eventsPurgedPerRun(5000, 42)).toBe(42 * 10 * 500);
    expect(eventsPurgedPerRun(5000, 43)).toBe(43 * 10 * 500);
    expect(ceiling(90, 'Retention purge of events').eventsPerDay).toBe(90 * 6 * 500 * 96);
    expect(ceiling(90, 'Retention purge of events').perShard).toBe(false);
    expect(ceiling(1, 'Retention purge of events').postsPerSecond).toBeNull();
  });

  it('should interpolate a fan-out it did not measure from 0 and 1 subscription', () => {
    const model = runModel(MEASURED, PLATFORM, { ...OPTIONS, subscriptionsPerEvent: 2 });
    // Ingest 2 + 2 x 1 = 4 queries, plus 2 attempts of 3.
    expect(model.event.d1Statements).toBe(10);
    expect(model.event.d1Bytes).toBe(2500 + 2 * 1000);
    expect(model.event.queueMessages).toBe(2);
  });

  it('should price a million events from their rows, bytes, messages and requests', () => {
    const { events, posts } = runModel(MEASURED, PLATFORM, OPTIONS).costPerMillion;
    // 10 + 5 D1 rows written: $15; 4 rows read: $0.004.
    expect(events['D1 rows read and written']).toBeCloseTo(15.004, 9);
    // 3,000 bytes kept 30 days: 3e-6 GB-months each, $0.75 per GB-month.
    expect(events['D1 storage']).toBeCloseTo(3e-6 * 0.75 * 1e6, 9);
    // 1 message, 3 operations at $0.40 per million.
    expect(events.Queues).toBeCloseTo(1.2, 9);
    // 1 ingress + 0.1 consumer invocation; 3 object requests (limiter, event object, outbox)
    // and 2 outbox rows written.
    expect(events['Workers requests and CPU']).toBeCloseTo(1.1 * 0.3, 9);
    expect(events['Durable Objects']).toBeCloseTo(3 * 0.15 + 2 * 1, 9);
    expect(events.total).toBeCloseTo(15.004 + 2.25 + 1.2 + 0.33 + 2.45, 9);
    // A POST: 1 limiter and 2 key object requests; 2 + 1 rows written and 2 + 4 read in its
    // key object; 1,000 bytes kept one day (1e-6 GB for 1/30 month at $0.20); nothing in D1.
    expect(posts['D1 rows read and written']).toBe(0);
    expect(posts['D1 storage']).toBe(0);
    expect(posts['Durable Objects']).toBeCloseTo(
      3 * 0.15 + 3 * 1 + 6 * 0.001 + (1e-6 * 0.2 * 1e6) / 30,
      9,
    );
  });

  it('should refuse a shard count that is not a whole number of at least 1', () => {
    expect(() => runModel(MEASURED, PLATFORM, { ...OPTIONS, shards: 0 })).toThrow(/shards/);
    expect(() => runModel(MEASURED, PLATFORM, { ...OPTIONS, shards: 1.5 })).toThrow(/shards/);
  });
});

describe('target configuration', () => {
  const target = {
    eventsPerDay: 10_000_000,
    retentionDays: 30,
    peakPostsPerSecond: 1000,
    averagePostsPerSecond: 250,
    headroom: 0.5,
    sizeHeadroom: 0.8,
  };

  it('should take the shards the most demanding per-shard constraint needs', () => {
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, {
      ...target,
      eventsPerDay: 2_000_000,
      averagePostsPerSecond: 100,
    });
    // Size: 2e6 x 30 x 3,000 B over 8 GB usable per shard (keys are not in D1).
    const size = Math.ceil((2e6 * 30 * 3000) / 8e9);
    // Queries of a shard but DB: 2e6 / 86,400 x 4 over 500/s usable per shard.
    const rate = Math.ceil(((2e6 / 86_400) * 4) / 500);
    // Events: 2e6 a day over 96 runs at half: 41,667 a run, 10 statements of 500 a shard.
    expect(result.needs).toEqual({
      'D1 size': size,
      'D1 query rate of each shard': rate,
      'Retention purge, events': 9,
    });
    expect(result.cron).toEqual({ minutes: 15, runsPerDay: 96 });
    expect(result.shards).toBe(Math.max(size, rate, 9));
    expect(result.model.options.shards).toBe(result.shards);
  });

  it("should keep the configured cron step when one run purges the day's events within the headroom", () => {
    // Size needs 113 (9e11 B over 8 GB). 1e7 events a day at */15: 208,333 a run at half;
    // 113 shards get 2 + 2 statements each, 226,000 events a run.
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    expect(result.needs['D1 size']).toBe(113);
    expect(result.cron).toEqual({ minutes: 15, runsPerDay: 96 });
    expect(result.shards).toBe(113);
    const purge = result.beyond.find((item) => item.name.startsWith('Retention purge of events'));
    expect(purge?.use).toBeCloseTo(1e7 / (113 * 4 * 500 * 96), 9);
  });

  it("should shorten the cron step until one run purges the day's events within the headroom", () => {
    // 1.5e7 events a day: size needs 169 shards, which get 1 + 1 statements each (169,000
    // events a run, and no more with more shards); at */15 and */10 a run must purge 312,500
    // or 208,333 at half, at */5 104,167.
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, { ...target, eventsPerDay: 1.5e7 });
    expect(result.needs['D1 size']).toBe(169);
    expect(result.cron).toEqual({ minutes: 5, runsPerDay: 288 });
    expect(result.shards).toBe(169);
    expect(result.model.options.cronRunsPerDay).toBe(288);
    const purge = result.beyond.find((item) => item.name.startsWith('Retention purge of events'));
    expect(purge?.use).toBeCloseTo(1.5e7 / (169 * 2 * 500 * 288), 9);
    // A configured step of 5 minutes is kept: nothing shorter is needed.
    const configured = solveTarget(
      MEASURED,
      PLATFORM,
      { ...OPTIONS, cronRunsPerDay: 288 },
      { ...target, eventsPerDay: 1.5e7 },
    );
    expect(configured.cron.minutes).toBe(5);
  });

  it('should hold the key objects to their request rate at the peak and their storage over the retention', () => {
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    const use = (name: string) => result.beyond.find((item) => item.name.startsWith(name))?.use;
    // 1,000 POSTs/s x 2 requests over 256 objects of 1,000 requests/s.
    expect(use('Idempotency key objects at peak')).toBeCloseTo(2000 / 256_000, 12);
    // 250 POSTs/s x 86,400 s x 1,000 B over 256 objects of 10 GB.
    expect(use("Idempotency key objects' storage")).toBeCloseTo(
      (250 * 86_400 * 1000) / (256 * 10e9),
      12,
    );
  });

  it("should put DB's query rate among the ceilings shards do not raise", () => {
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    const db = result.beyond.find((item) => item.name.startsWith('D1 query rate of DB'));
    // 113 shards: 1/113 of the events in DB (6 queries), the rest 3 in DB each; POSTs none.
    const perEvent = 6 / 113 + (112 / 113) * 3;
    expect(db?.use).toBeCloseTo(((1e7 / 86_400) * perEvent) / 1000, 9);
  });

  it('should spread a single caller at 1,000 POSTs/s over two limiter objects at half their rate', () => {
    // 60,000 a minute over objects of 30,000: two, each at 500 of its 1,000 requests/s.
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    const limiter = result.beyond.find((item) =>
      item.name.startsWith('Limiter objects of one caller'),
    );
    expect(limiter?.use).toBe(0.5);
    const oneObject = solveTarget(
      MEASURED,
      PLATFORM,
      { ...OPTIONS, limiterPerObjectPerMinute: 60_000 },
      target,
    );
    expect(
      oneObject.beyond.find((item) => item.name.startsWith('Limiter objects of one caller'))?.use,
    ).toBe(1);
  });

  it('should set the consumer from the queue rate, and bill the month by item', () => {
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    // 115.74 messages/s in batches of 10, 1 s each, at half: 24 concurrent invocations.
    expect(result.queue.messagesPerSecond).toBeCloseTo(1e7 / 86_400, 9);
    expect(result.queue.maxConcurrency).toBe(24);
    const perMillion = result.model.costPerMillion;
    expect(result.monthly.events).toBeCloseTo(300 * (perMillion.events.total ?? 0), 6);
    expect(result.monthly.posts).toBeCloseTo(
      ((250 * 86_400 * 30) / 1e6) * (perMillion.posts.total ?? 0),
      6,
    );
    // 300 million messages, 3 operations each at $0.40 a million; POSTs send none.
    expect(result.monthlyByItem.Queues).toBeCloseTo(360, 9);
    expect(result.monthlyByItem.total).toBeCloseTo(result.monthly.total, 6);
    const toml = targetConfiguration(result);
    expect(toml).toContain('D1_SHARDS = "DB,DB_SHARD_1,DB_SHARD_2,...,DB_SHARD_112"');
    expect(toml).toContain('max_concurrency = 24');
    expect(toml).toContain('crons = ["*/15 * * * *"]');
  });
});

describe('by volume', () => {
  it('should price each daily volume of events alone, with the shards and cron it needs', () => {
    const results = VOLUMES.map((eventsPerDay) =>
      solveTarget(MEASURED, PLATFORM, OPTIONS, {
        eventsPerDay,
        retentionDays: 30,
        peakPostsPerSecond: 0,
        averagePostsPerSecond: 0,
        headroom: 0.5,
        sizeHeadroom: 0.8,
      }),
    );
    // Without POSTs, a month is the events' part only, growing with the volume.
    for (const result of results) expect(result.monthly.posts).toBe(0);
    const totals = results.map((result) => result.monthly.total);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    expect(results[0]?.shards).toBe(1);
    const perMillion = results[3]?.model.costPerMillion.events.total ?? 0;
    expect(results[3]?.monthly.total).toBeCloseTo(300 * perMillion, 6);
    const table = volumeTable(results, VOLUMES).split('\n');
    expect(table).toHaveLength(2 + VOLUMES.length);
    expect(table[0]).toBe(
      '| events a day | D1 databases | cron | Workers requests and CPU | D1 rows read and written | D1 storage | Queues | Durable Objects | a month |',
    );
    expect(table[2]).toMatch(/^\| 10,000 \| 1 \| \*\/15 \| /);
    expect(table[5]).toContain(`| $${(results[3]?.monthly.total ?? 0).toFixed(2)} |`);
  });
});

describe('parseMeasured', () => {
  it('should refuse measurements that miss a unit', () => {
    expect(() => parseMeasured({ units: [] })).toThrow(/ingest_0/);
  });

  it('should refuse a run saved before events were measured on another shard', () => {
    const units = [
      ...Object.values(MEASURED.ingest),
      MEASURED.attempt,
      MEASURED.post,
      MEASURED.postReplay,
      MEASURED.keyExpiry,
      MEASURED.purge,
    ];
    expect(() => parseMeasured({ units })).toThrow(/ingest_0_shard/);
  });

  it('should refuse a run saved before keys moved to their objects (no key_expiry unit)', () => {
    const units = [
      ...Object.values(MEASURED.ingest),
      MEASURED.attempt,
      MEASURED.post,
      MEASURED.postReplay,
      MEASURED.purge,
      ...Object.values(MEASURED.otherShard.ingest),
      MEASURED.otherShard.attempt,
    ];
    expect(() => parseMeasured({ units })).toThrow(/key_expiry/);
    expect(parseMeasured({ units: [...units, MEASURED.keyExpiry] }).keyExpiry).toEqual(
      MEASURED.keyExpiry,
    );
  });
});

describe('scale line', () => {
  it('should sum the rows of every store, and judge the 100 M configuration by its headroom', () => {
    const model = runModel(MEASURED, PLATFORM, OPTIONS);
    const at100m = solveTarget(MEASURED, PLATFORM, OPTIONS, TARGET_100M);
    const line = scaleLine(MEASURED, model, at100m);
    expect(line).toMatch(
      /^scale: event rows_written=[\d.]+ usd_per_million=[\d.]+ shared_queries=[\d.]+; post rows_written=[\d.]+ usd_per_million=[\d.]+; target_100m=(holds|fails)$/,
    );
    // An event: 10 D1 rows at ingest + 5 at its attempt + 2 in its outbox; no purge measured.
    expect(line).toContain('event rows_written=17 ');
    // A POST: 2 rows to claim and store its answer, 1 to expire it, none in D1.
    expect(line).toContain('post rows_written=3 ');
    // 6 queries of DB per event with one shard.
    expect(line).toContain('shared_queries=6;');
    const over = at100m.beyond.some((item) => item.use > 0.5);
    expect(line.endsWith(over ? 'target_100m=fails' : 'target_100m=holds')).toBe(true);
  });
});
