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
  readonly outboxStorage?: {
    readonly rowsRead: number;
    readonly rowsWritten: number;
    readonly metered: boolean;
  };
}

/**
 * The bounds of one cron run's idempotency key purge, as worker/cron.ts sets them (the
 * measuring run reads its exported constants): each shard gets
 * min(`statementsPerShard`, max(1, floor(`statementsPerRun` / shards))) statements of
 * `batchSize` keys.
 */
export interface KeyPurgeRule {
  /** Keys deleted per statement (`PURGE_BATCH_SIZE`). */
  readonly batchSize: number;
  /** Most statements per shard and run (`PURGE_MAX_BATCHES`). */
  readonly statementsPerShard: number;
  /** Most statements per run, every shard together (`PURGE_MAX_STATEMENTS_PER_RUN`). */
  readonly statementsPerRun: number;
}

/** What one cron run purged, one shard holding a backlog larger than it may take. */
interface PurgeMeasure {
  readonly unit: 'cron_run';
  readonly eventsPurged: number;
  readonly keysPurged: number;
  readonly statements: number;
  readonly roundTrips: number;
  readonly keyPurge: KeyPurgeRule;
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
  readonly purge: PurgeMeasure;
}

/**
 * Sorts the measuring run's JSON into {@link Measured}.
 *
 * @param raw - `{ units: [...] }` as POSTed by the measuring file.
 * @throws {Error} when a unit is missing, or the cron run has no key purge rule.
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
    purge: withKeyPurge(find<PurgeMeasure>('cron_run')),
  };
}

// A run saved before the key purge was spread over shards has no rule: measure again.
function withKeyPurge(purge: PurgeMeasure): PurgeMeasure {
  const rule = (purge as Partial<PurgeMeasure>).keyPurge;
  const known = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1;
  if (
    rule === undefined ||
    !known(rule.batchSize) ||
    !known(rule.statementsPerShard) ||
    !known(rule.statementsPerRun)
  ) {
    throw new Error(
      'the cron_run measurement has no keyPurge rule (saved before the key purge was per shard): measure again',
    );
  }
  return purge;
}

/** What one unit of the model's traffic costs the platform. */
export interface Cost {
  readonly d1Statements: number;
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
  /** Worker invocations billed as requests: the ingress or proxy, and consumer invocations. */
  readonly workerInvocations: number;
  readonly fetches: number;
}

const limiter = (unit: UnitMeasure) => unit.objectRequests.RATE_LIMITER ?? 0;

/**
 * One event with `subscriptions` matching subscriptions, each delivered at its first attempt:
 * the measured ingest (interpolated from 0 and 1 subscriptions for other counts) plus one
 * measured attempt per delivery.
 *
 * @param measured - the measurements.
 * @param subscriptions - matching subscriptions per event (0 or more).
 * @param consumerBatchSize - messages per consumer invocation (`max_batch_size`), full batches.
 */
export function eventCost(
  measured: Measured,
  subscriptions: number,
  consumerBatchSize: number,
): Cost {
  const measuredIngest = (measured.ingest as Record<number, UnitMeasure>)[subscriptions];
  const zero = measured.ingest[0];
  const one = measured.ingest[1];
  const ingest = (pick: (unit: UnitMeasure) => number) =>
    measuredIngest === undefined
      ? pick(zero) + subscriptions * (pick(one) - pick(zero))
      : pick(measuredIngest);
  const { attempt } = measured;
  const outbox = attempt.outboxStorage;
  return {
    d1Statements: ingest((u) => u.statements) + subscriptions * attempt.statements,
    d1RowsRead: ingest((u) => u.rowsRead) + subscriptions * attempt.rowsRead,
    d1RowsWritten: ingest((u) => u.rowsWritten) + subscriptions * attempt.rowsWritten,
    d1Bytes: ingest((u) => u.bytesStored) + subscriptions * attempt.bytesStored,
    queueMessages: ingest((u) => u.queueMessages),
    limiterRequests: ingest(limiter),
    outboxRequestsPerDelivery:
      (attempt.objectRequests.SUBSCRIBER_OUTBOX ?? 0) + (attempt.pendingAlarms ?? 0),
    deliveries: subscriptions,
    outboxRowsRead: subscriptions * (outbox?.rowsRead ?? 0),
    outboxRowsWritten: subscriptions * (outbox?.rowsWritten ?? 0),
    workerInvocations: 1 + subscriptions / consumerBatchSize,
    fetches: ingest((u) => u.fetches) + subscriptions * attempt.fetches,
  };
}

/** One new idempotent POST (claim, upstream call, stored response). */
export function postCost(measured: Measured): Cost {
  const { post } = measured;
  return {
    d1Statements: post.statements,
    d1RowsRead: post.rowsRead,
    d1RowsWritten: post.rowsWritten,
    d1Bytes: post.bytesStored,
    queueMessages: post.queueMessages,
    limiterRequests: limiter(post),
    outboxRequestsPerDelivery: 0,
    deliveries: 0,
    outboxRowsRead: 0,
    outboxRowsWritten: 0,
    workerInvocations: 1,
    fetches: post.fetches,
  };
}
