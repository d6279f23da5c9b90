/**
 * The measurements the load model starts from (test/worker/scale/measure-units.ts writes
 * them), and what one webhook event and one idempotent POST cost, built from them.
 */

/** What one unit of work cost, averaged over its samples. */
export interface UnitMeasure {
  readonly unit: string;
  readonly samples: number;
  /** D1 statements executed (a batch's statements each count: D1 runs them one at a time). */
  readonly statements: number;
  /** D1 round trips (one per `batch()` or single statement awaited). */
  readonly roundTrips: number;
  /** Of those, the ones the caller waits for before its answer (ingress and proxy only). */
  readonly roundTripsBeforeAnswer?: number;
  /** D1's own `meta.rows_read` / `meta.rows_written`, the billed figures. */
  readonly rowsRead: number;
  readonly rowsWritten: number;
  /** Growth of the D1 file (`meta.size_after`) per unit, in bytes. */
  readonly bytesStored: number;
  readonly queueMessages: number;
  readonly queueSendCalls: number;
  /** Durable Object requests by binding (`RATE_LIMITER`, `SUBSCRIBER_OUTBOX`). */
  readonly objectRequests: Readonly<Record<string, number>>;
  /** `fetch` subrequests (upstream, subscriber). */
  readonly fetches: number;
  /** The webhook body's size, in bytes (ingest units). */
  readonly bodyBytes?: number;
  /** Alarms left set per attempt: each is one more Durable Object request when it fires. */
  readonly pendingAlarms?: number;
  /** The outbox's own SQLite storage per attempt, billed like D1 rows. */
  readonly outboxStorage?: ObjectStorage;
  /** The idempotency key objects' own storage per POST (alarms apart), billed like D1 rows. */
  readonly keyStorage?: ObjectStorage;
}

/** What one unit wrote to and read from a Durable Object's own storage. */
interface ObjectStorage {
  readonly rowsRead: number;
  readonly rowsWritten: number;
  /** Alarms set, counted apart where the model spreads them (key objects). */
  readonly alarmWrites?: number;
  readonly metered: boolean;
}

/** The expiry of stored keys by their objects' alarms, per key. */
interface KeyExpiryMeasure {
  readonly unit: 'key_expiry';
  readonly samples: number;
  /** The bytes of a stored key's row (its columns' lengths and 8 per number). */
  readonly bytesKept: number;
  /** What the alarms wrote and read, per key deleted. */
  readonly keyStorage: ObjectStorage;
}

/** What one cron run purged, one shard holding a backlog larger than it may take. */
interface PurgeMeasure {
  readonly unit: 'cron_run';
  readonly eventsPurged: number;
  readonly statements: number;
  readonly roundTrips: number;
  /** D1 rows the purge's deletes wrote (index entries included), when measured. */
  readonly rowsWritten?: number;
}

/** What a shard other than `DB` leaves to `DB` for its events (D1's own counts, per unit). */
export interface DbPart {
  readonly statements: number;
  readonly roundTrips: number;
  readonly rowsRead: number;
  readonly rowsWritten: number;
}

/**
 * A unit measured with its event stored on a shard other than `DB`: the shard's figures, and
 * in `onDb` what `DB` did for it (the subscriptions' snapshot read, what stays in `DB`).
 */
export interface ShardUnitMeasure extends UnitMeasure {
  readonly onDb: DbPart;
}

/** Every measurement, by unit. */
export interface Measured {
  /** Ingest of one new event with 0, 1 and 3 matching subscriptions. */
  readonly ingest: Readonly<Record<0 | 1 | 3, UnitMeasure>>;
  /** One delivery attempt that succeeds (consumer handover, outbox, D1 records). */
  readonly attempt: UnitMeasure;
  /** One new idempotent POST, and the same POST replayed. */
  readonly post: UnitMeasure;
  readonly postReplay: UnitMeasure;
  /** The expiry of those POSTs' keys. */
  readonly keyExpiry: KeyExpiryMeasure;

  readonly purge: PurgeMeasure;
  /** The same ingest and attempt with the event stored on a shard other than `DB`. */
  readonly otherShard: {
    readonly ingest: Readonly<Record<0 | 1 | 3, ShardUnitMeasure>>;
    readonly attempt: ShardUnitMeasure;
  };
}

/**
 * Sorts the measuring run's JSON into {@link Measured}.
 *
 * @param raw - `{ units: [...] }` as POSTed by the measuring file.
 * @throws {Error} when a unit is missing (a run saved before events were spread over shards
 *   has no `*_shard` units, one saved before keys moved to Durable Objects no `key_expiry`:
 *   measure again).
 */
export function parseMeasured(raw: unknown): Measured {
  const units = (raw as { units?: unknown[] }).units ?? [];
  const find = <T>(name: string): T => {
    const found = units.find((unit) => (unit as { unit?: unknown }).unit === name);
    if (found === undefined) throw new Error(`the measurements have no ${name} unit`);
    return found as T;
  };
  return {
    ingest: {
      0: find<UnitMeasure>('ingest_0'),
      1: find<UnitMeasure>('ingest_1'),
      3: find<UnitMeasure>('ingest_3'),
    },
    attempt: find<UnitMeasure>('attempt'),
    post: find<UnitMeasure>('post'),
    postReplay: find<UnitMeasure>('post_replay'),
    keyExpiry: find<KeyExpiryMeasure>('key_expiry'),

    purge: find<PurgeMeasure>('cron_run'),
    otherShard: {
      ingest: {
        0: find<ShardUnitMeasure>('ingest_0_shard'),
        1: find<ShardUnitMeasure>('ingest_1_shard'),
        3: find<ShardUnitMeasure>('ingest_3_shard'),
      },
      attempt: find<ShardUnitMeasure>('attempt_shard'),
    },
  };
}

/** What one unit of the model's traffic costs the platform. */
export interface Cost {
  /** D1 queries, every database together. */
  readonly d1Statements: number;
  /**
   * D1 queries a shard other than `DB` makes for a unit it holds (with one shard: `DB`'s): the
   * query rate of every shard but `DB` rises with the shards.
   */
  readonly d1StatementsAtHome: number;
  /**
   * D1 queries `DB` makes for the unit on average: all of them for a unit stored in `DB`
   * (1 in N), the subscriptions' snapshot and what else stays in `DB` for the others.
   */
  readonly d1StatementsOnDb: number;
  readonly d1RowsRead: number;
  readonly d1RowsWritten: number;
  /** D1 bytes kept until the retention purge. */
  readonly d1Bytes: number;
  readonly queueMessages: number;
  /** Requests to the one limiter object of the sender (per address, or per caller). */
  readonly limiterRequests: number;
  /** Requests to the outbox of each subscription delivered to (per delivery). */
  readonly outboxRequestsPerDelivery: number;
  readonly deliveries: number;
  readonly outboxRowsRead: number;
  readonly outboxRowsWritten: number;
  /** Requests to the idempotency key objects (the claim, the stored answer). */
  readonly keyRequests: number;
  /** Rows of the key objects: the claim, the stored answer and the expiry (alarms apart). */
  readonly keyRowsRead: number;
  readonly keyRowsWritten: number;
  /** Bytes a key keeps in its object until its expiry. */
  readonly keyBytes: number;
  /**
   * Requests to the webhook event objects (the receipt of an event, only while more than one
   * generation of shards is kept; they store nothing).
   */
  readonly eventObjectRequests: number;
  /** Worker invocations billed as requests: the ingress or proxy, and consumer invocations. */
  readonly workerInvocations: number;
  readonly fetches: number;
}

const limiter = (unit: UnitMeasure) => unit.objectRequests.RATE_LIMITER ?? 0;

/**
 * One event with `subscriptions` matching subscriptions, each delivered at its first attempt:
 * the measured ingest (interpolated from 0 and 1 subscriptions for other counts) plus one
 * measured attempt per delivery, averaged over `shards` shards: 1 in `shards` events is
 * stored in `DB` (measured there), the others on another shard (measured there, plus what
 * `DB` does for them).
 *
 * @param measured - the measurements.
 * @param subscriptions - matching subscriptions per event (0 or more).
 * @param consumerBatchSize - messages per consumer invocation (`max_batch_size`), full batches.
 * @param shards - the event shards (`D1_SHARDS`), at least 1. @default 1
 */
export function eventCost(
  measured: Measured,
  subscriptions: number,
  consumerBatchSize: number,
  shards = 1,
): Cost {
  const { otherShard } = measured;
  const inDb = placedCost(measured.ingest, measured.attempt, subscriptions, (unit) => unit);
  const other = placedCost(otherShard.ingest, otherShard.attempt, subscriptions, (unit) => unit);
  const otherOnDb = placedCost(
    otherShard.ingest,
    otherShard.attempt,
    subscriptions,
    (unit) => (unit as ShardUnitMeasure).onDb,
  );
  const offDb = (shards - 1) / shards;
  const mix = (pick: (cost: PlacedCost) => number) =>
    pick(inDb) / shards + offDb * (pick(other) + pick(otherOnDb));
  const { attempt } = measured;
  const outbox = attempt.outboxStorage;
  return {
    d1Statements: mix((c) => c.statements),
    d1StatementsAtHome: shards === 1 ? inDb.statements : other.statements,
    d1StatementsOnDb: inDb.statements / shards + offDb * otherOnDb.statements,
    d1RowsRead: mix((c) => c.rowsRead),
    d1RowsWritten: mix((c) => c.rowsWritten),
    // The same rows wherever they are stored: taken where the samples were most.
    d1Bytes: inDb.bytesStored,
    queueMessages: inDb.queueMessages,
    limiterRequests: inDb.limiterRequests,
    outboxRequestsPerDelivery:
      (attempt.objectRequests.SUBSCRIBER_OUTBOX ?? 0) + (attempt.pendingAlarms ?? 0),
    deliveries: subscriptions,
    outboxRowsRead: subscriptions * (outbox?.rowsRead ?? 0),
    outboxRowsWritten: subscriptions * (outbox?.rowsWritten ?? 0),
    keyRequests: 0,
    keyRowsRead: 0,
    keyRowsWritten: 0,
    keyBytes: 0,
    eventObjectRequests: measured.ingest[1].objectRequests.WEBHOOK_EVENTS ?? 0,
    workerInvocations: 1 + subscriptions / consumerBatchSize,
    fetches: inDb.fetches,
  };
}

/** One event's measured figures where they were counted: its ingest and its attempts. */
interface PlacedCost {
  readonly statements: number;
  readonly rowsRead: number;
  readonly rowsWritten: number;
  readonly bytesStored: number;
  readonly queueMessages: number;
  readonly limiterRequests: number;
  readonly fetches: number;
}

/** The figures of a unit {@link placedCost} reads: the unit's own, or its `DB` part. */
type Figures = Partial<Omit<UnitMeasure, 'objectRequests'>> & {
  readonly objectRequests?: Readonly<Record<string, number>>;
};

// The ingest (interpolated for an unmeasured fan-out) plus one attempt per subscription,
// each figure read from a unit through `view` (the unit itself, or its `DB` part).
function placedCost(
  ingestUnits: Readonly<Record<0 | 1 | 3, UnitMeasure>>,
  attempt: UnitMeasure,
  subscriptions: number,
  view: (unit: UnitMeasure) => Figures,
): PlacedCost {
  const measuredIngest = (ingestUnits as Record<number, UnitMeasure>)[subscriptions];
  type Pick = (figures: Figures) => number | undefined;
  const value = (unit: UnitMeasure, pick: Pick) => pick(view(unit)) ?? 0;
  const ingest = (pick: Pick) =>
    measuredIngest === undefined
      ? value(ingestUnits[0], pick) +
        subscriptions * (value(ingestUnits[1], pick) - value(ingestUnits[0], pick))
      : value(measuredIngest, pick);
  const both = (pick: Pick) => ingest(pick) + subscriptions * value(attempt, pick);
  return {
    statements: both((u) => u.statements),
    rowsRead: both((u) => u.rowsRead),
    rowsWritten: both((u) => u.rowsWritten),
    bytesStored: both((u) => u.bytesStored),
    queueMessages: ingest((u) => u.queueMessages),
    limiterRequests: ingest((u) => u.objectRequests?.RATE_LIMITER),
    fetches: both((u) => u.fetches),
  };
}

/**
 * One new idempotent POST: the claim, the upstream call, the stored response, and later the
 * key's expiry (its object's alarm; the alarm's own write is per object and sweep, not per
 * key: the model counts it apart).
 */
export function postCost(measured: Measured): Cost {
  const { post, keyExpiry } = measured;
  const stored = post.keyStorage;
  const expiry = keyExpiry.keyStorage;
  return {
    d1Statements: post.statements,
    d1StatementsAtHome: post.statements,
    d1StatementsOnDb: post.statements,
    d1RowsRead: post.rowsRead,
    d1RowsWritten: post.rowsWritten,
    d1Bytes: post.bytesStored,
    queueMessages: post.queueMessages,
    limiterRequests: limiter(post),
    outboxRequestsPerDelivery: 0,
    deliveries: 0,
    outboxRowsRead: 0,
    outboxRowsWritten: 0,
    keyRequests: post.objectRequests.IDEMPOTENCY_KEYS ?? 0,
    keyRowsRead: (stored?.rowsRead ?? 0) + expiry.rowsRead,
    keyRowsWritten: (stored?.rowsWritten ?? 0) + expiry.rowsWritten,
    keyBytes: keyExpiry.bytesKept,
    eventObjectRequests: 0,
    workerInvocations: 1,
    fetches: post.fetches,
  };
}
