import { describe, expect, it } from 'vitest';
import {
  keysPurgedPerRun,
  type ModelOptions,
  type Platform,
  runModel,
} from '../../bench/scale/model.ts';
import { solveTarget } from '../../bench/scale/target.ts';
import { type Measured, parseMeasured, type UnitMeasure } from '../../bench/scale/units.ts';

// Round figures, so every expected value below is worked out by hand.
const PLATFORM: Platform = {
  d1DatabaseBytes: 10e9,
  d1QueriesPerSecond: 1000,
  queueMessagesPerSecond: 5000,
  objectRequestsPerSecond: 1000,
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
  assumed: { cpuMsPerInvocation: 0, outboxActiveMsPerDelivery: 0, limiterActiveMs: 0 },
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
      objectRequests: { RATE_LIMITER: 1 },
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
  post: unit('post', {
    statements: 4,
    rowsWritten: 5,
    bytesStored: 1000,
    objectRequests: { RATE_LIMITER: 1 },
  }),
  postReplay: unit('post_replay', { statements: 2, objectRequests: { RATE_LIMITER: 1 } }),
  purge: {
    unit: 'cron_run',
    eventsPurged: 5000,
    keysPurged: 5000,
    statements: 22,
    roundTrips: 22,
    // worker/cron.ts's bounds: 500 keys a statement, 10 statements a shard, 900 a run.
    keyPurge: { batchSize: 500, statementsPerShard: 10, statementsPerRun: 900 },
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
    // (2,000 + 1,000) bytes per event for 30 days in 10 GB; keys: 1,000 bytes for 86,400 s.
    expect(ceiling(1, 'D1 size').eventsPerDay).toBeCloseTo(10e9 / (3000 * 30), 6);
    expect(ceiling(1, 'D1 size').postsPerSecond).toBeCloseTo(10e9 / (1000 * 86_400), 6);
  });

  it('should meet the D1 query rate at the queries of an event and its attempts', () => {
    // 3 at ingest + 3 per attempt: 6 queries per event; 4 per POST.
    expect(ceiling(1, 'D1 query rate').eventsPerDay).toBeCloseTo((1000 * 86_400) / 6, 6);
    expect(ceiling(1, 'D1 query rate').postsPerSecond).toBe(250);
  });

  it('should multiply the D1 ceilings by the shards, and leave the single objects and the queue alone', () => {
    for (const name of ['D1 size', 'D1 query rate']) {
      expect(ceiling(3, name).eventsPerDay).toBeCloseTo(
        3 * (ceiling(1, name).eventsPerDay ?? 0),
        6,
      );
      expect(ceiling(3, name).postsPerSecond).toBeCloseTo(
        3 * (ceiling(1, name).postsPerSecond ?? 0),
        6,
      );
    }
    for (const name of ['Queue throughput', 'Outbox object']) {
      expect(ceiling(3, name).eventsPerDay).toBe(ceiling(1, name).eventsPerDay);
      expect(ceiling(3, name).postsPerSecond).toBe(ceiling(1, name).postsPerSecond);
    }
    // A sender's limit above one limiter object's share is spread over more objects: no ceiling.
    expect(ceiling(8, 'Limiter objects').postsPerSecond).toBeNull();
    expect(ceiling(8, 'Limiter objects').eventsPerDay).toBeNull();
    expect(ceiling(1, 'Queue throughput').eventsPerDay).toBe(5000 * 86_400);
  });

  it('should bound the event purge by what one cron run deletes, times the runs a day and the shards', () => {
    expect(ceiling(1, 'Retention purge of events').eventsPerDay).toBe(5000 * 96);
    expect(ceiling(3, 'Retention purge of events').eventsPerDay).toBe(3 * 5000 * 96);
    expect(ceiling(1, 'Retention purge of events').postsPerSecond).toBeNull();
  });

  it('should purge keys at 500 a statement, min(10, max(1, floor(900 / N))) statements per shard', () => {
    const keysPerSecond = (shards: number) =>
      ceiling(shards, 'Retention purge of idempotency keys').postsPerSecond;
    const perRun = (keys: number) => (keys * 96) / 86_400;
    expect(keysPerSecond(1)).toBeCloseTo(perRun(5000), 9);
    expect(keysPerSecond(3)).toBeCloseTo(perRun(3 * 5000), 9);
    // 90 shards use the run's 900 statements; 91 get 9 each (819), 100 get 9 (900 again).
    expect(keysPerSecond(90)).toBeCloseTo(perRun(90 * 10 * 500), 9);
    expect(keysPerSecond(91)).toBeCloseTo(perRun(91 * 9 * 500), 9);
    expect(keysPerSecond(100)).toBeCloseTo(perRun(100 * 9 * 500), 9);
    // Past 900 shards each still gets one statement.
    expect(keysPerSecond(1000)).toBeCloseTo(perRun(1000 * 500), 9);
    expect(keysPurgedPerRun(MEASURED.purge.keyPurge, 451)).toBe(451 * 1 * 500);
    expect(ceiling(1, 'Retention purge of idempotency keys').eventsPerDay).toBeNull();
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
    // 1 ingress + 0.1 consumer invocation; 2 object requests and 2 outbox rows written.
    expect(events['Workers requests and CPU']).toBeCloseTo(1.1 * 0.3, 9);
    expect(events['Durable Objects']).toBeCloseTo(2 * 0.15 + 2 * 1, 9);
    expect(events.total).toBeCloseTo(15.004 + 2.25 + 1.2 + 0.33 + 2.3, 9);
    // A key kept one day: 1e-6 GB for 1/30 month.
    expect(posts['D1 storage']).toBeCloseTo((1e-6 * 0.75 * 1e6) / 30, 9);
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
    // 100 POSTs/s on average: few enough keys for the purge at any count tried here.
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, {
      ...target,
      averagePostsPerSecond: 100,
    });
    // Size: 1e7 x 30 x 3,000 B + 100 x 86,400 keys x 1,000 B over 8 GB usable per shard.
    const size = Math.ceil((1e7 * 30 * 3000 + 100 * 86_400 * 1000) / 8e9);
    // Queries: 1e7 / 86,400 x 6 + 1,000 x 4 over 500/s usable per shard.
    const rate = Math.ceil(((1e7 / 86_400) * 6 + 4000) / 500);
    // Purge: 1e7 events a day over half of 480,000 per shard.
    const purge = Math.ceil(1e7 / 240_000);
    // Keys: 8,640,000 a day, 90,000 a run, 180,000 at half of a run: 5,000 per shard.
    expect(result.needs).toEqual({
      'D1 size': size,
      'D1 query rate': rate,
      'Retention purge, events': purge,
      'Retention purge, keys': 36,
    });
    expect(result.shards).toBe(Math.max(size, rate, purge, 36));
    expect(result.model.options.shards).toBe(result.shards);
  });

  it('should take the fewest shards whose key purge carries the keys, from the other needs up', () => {
    // 250 POSTs/s: 21,600,000 keys a day, 225,000 a run, 450,000 at half of a run: 90 shards.
    const keysOnly = { ...target, eventsPerDay: 0, peakPostsPerSecond: 0 };
    const ninety = solveTarget(MEASURED, PLATFORM, OPTIONS, keysOnly);
    expect(ninety.needs['Retention purge, keys']).toBe(90);
    expect(ninety.shards).toBe(90);
    // Size alone needs 95 (94.5 x 8 GB): 95 shards purge 95 x 9 x 500 = 427,500 keys a run,
    // too few; 100 shards (9 statements each) purge 450,000 again.
    const bytes = 94.5 * 8e9 - 250 * 86_400 * 1000;
    const large = solveTarget(MEASURED, PLATFORM, OPTIONS, {
      ...keysOnly,
      eventsPerDay: bytes / (30 * 3000),
    });
    expect(large.needs['D1 size']).toBe(95);
    expect(large.shards).toBe(100);
    // The whole target: size needs 116, which get 7 statements each (406,000 keys a run);
    // 150 shards get 6 (450,000).
    const whole = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    expect(whole.needs['D1 size']).toBe(116);
    expect(whole.shards).toBe(150);
    const purge = (result: ReturnType<typeof solveTarget>) =>
      result.beyond.find((item) => item.name.startsWith('Retention purge of idempotency keys'));
    expect(purge(large)?.use).toBeCloseTo(0.5, 9);
  });

  it('should show the key purge over its headroom when no shard count carries the keys', () => {
    // 300 POSTs/s: 270,000 keys a run, over half of the 450,000 any count may purge.
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, {
      ...target,
      eventsPerDay: 0,
      peakPostsPerSecond: 0,
      averagePostsPerSecond: 300,
    });
    expect(result.needs['Retention purge, keys']).toBe(90);
    expect(result.shards).toBe(90);
    const purge = result.beyond.find((item) =>
      item.name.startsWith('Retention purge of idempotency keys'),
    );
    expect(purge?.use).toBeCloseTo((300 * 86_400) / (450_000 * 96), 9);
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

  it('should bill the month from the cost per million', () => {
    const result = solveTarget(MEASURED, PLATFORM, OPTIONS, target);
    const perMillion = result.model.costPerMillion;
    expect(result.monthly.events).toBeCloseTo(300 * (perMillion.events.total ?? 0), 6);
    expect(result.monthly.posts).toBeCloseTo(
      ((250 * 86_400 * 30) / 1e6) * (perMillion.posts.total ?? 0),
      6,
    );
  });
});

describe('parseMeasured', () => {
  it('should refuse measurements that miss a unit', () => {
    expect(() => parseMeasured({ units: [] })).toThrow(/ingest_0/);
  });

  it('should refuse a cron run saved without its key purge rule', () => {
    const units = [
      ...Object.values(MEASURED.ingest),
      MEASURED.attempt,
      MEASURED.post,
      MEASURED.postReplay,
    ];
    const { keyPurge: _rule, ...purge } = MEASURED.purge;
    expect(() => parseMeasured({ units: [...units, purge] })).toThrow(/keyPurge/);
    expect(parseMeasured({ units: [...units, MEASURED.purge] }).purge.keyPurge).toEqual(
      MEASURED.purge.keyPurge,
    );
  });
});
