/**
 * Meters for the load model's measurements (`npm run bench -- scale`): wrappers of the real
 * bindings that count what one unit of work costs the platform, with nothing stubbed below
 * them. D1 statements, round trips and the rows D1 itself reports read and written (its
 * result `meta`, the figures it bills); Queue messages (a recording stand-in: the measurement
 * hands the messages to the consumer itself, so nothing else consumes them); Durable Object
 * requests (every method called on a stub is one billed request); and `fetch` subrequests.
 */
import { env } from 'cloudflare:workers';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the load model's measurements are POSTed (bench/scale/global-setup.ts). */
    scaleSinkUrl: string;
    /** The consumer's `max_batch_size`: the size of a measured batch of attempts. */
    consumerBatchSize: number;
  }
}

/** What one stretch of work cost, as counted by the meters below. */
export interface Meter {
  /** D1 statements executed (each statement of a batch counts: D1 runs them one at a time). */
  statements: number;
  /** D1 calls made: one per `batch()`, `run()`, `all()` or `first()`. */
  roundTrips: number;
  /** Of those, the ones not answered yet (a write deferred past the answer is one). */
  inFlight: number;
  /** `meta.rows_read` summed over every statement. */
  rowsRead: number;
  /** `meta.rows_written` summed over every statement (index rows included). */
  rowsWritten: number;
  /** Messages sent to the queue, and the `send` / `sendBatch` calls that carried them. */
  queueMessages: number;
  queueSendCalls: number;
  /** Requests to Durable Objects, by binding name. */
  objectRequests: Record<string, number>;
  /** Calls of the global `fetch` (upstream, subscribers, resolvers). */
  fetches: number;
}

/** A meter at zero. */
export function newMeter(): Meter {
  return {
    statements: 0,
    roundTrips: 0,
    inFlight: 0,
    rowsRead: 0,
    rowsWritten: 0,
    queueMessages: 0,
    queueSendCalls: 0,
    objectRequests: {},
    fetches: 0,
  };
}

type Meta = { rows_read?: number; rows_written?: number };

function addMeta(meter: Meter, meta: Meta | undefined): void {
  meter.rowsRead += meta?.rows_read ?? 0;
  meter.rowsWritten += meta?.rows_written ?? 0;
}

// One round trip of `statements` statements: counted when it starts, in flight until it ends.
async function trip<R extends { meta?: Meta }>(
  meter: Meter,
  statements: number,
  call: () => Promise<R[]>,
): Promise<R[]> {
  meter.statements += statements;
  meter.roundTrips++;
  meter.inFlight++;
  try {
    const results = await call();
    for (const result of results) addMeta(meter, result.meta);
    return results;
  } finally {
    meter.inFlight--;
  }
}

// Counts the calls of one statement; `first()` runs as `all()` so its meta (which `first()`
// drops) is counted: D1 runs the same query either way and `first()` takes the first row.
function meterStatement(statement: D1PreparedStatement, meter: Meter): D1PreparedStatement {
  const bind = statement.bind.bind(statement);
  const all = statement.all.bind(statement);
  const run = statement.run.bind(statement);
  statement.bind = (...values: unknown[]) => meterStatement(bind(...values), meter);
  statement.all = <T>() =>
    trip(meter, 1, async () => [await all<T>()]).then(([r]) => r as D1Result<T>);
  statement.run = <T>() =>
    trip(meter, 1, async () => [await run<T>()]).then(([r]) => r as D1Result<T>);
  statement.first = (async (column?: string) => {
    const row = ((await statement.all()).results[0] ?? null) as Record<string, unknown> | null;
    if (column === undefined || row === null) return row;
    return row[column] ?? null;
  }) as unknown as D1PreparedStatement['first'];
  return statement;
}

/** The real `DB` binding, metered into `meter`. */
export function meteredDb(meter: Meter, db: D1Database = env.DB): D1Database {
  return new Proxy(db, {
    get: (target, name) => {
      if (name === 'prepare') return (sql: string) => meterStatement(target.prepare(sql), meter);
      if (name === 'batch') {
        return (statements: D1PreparedStatement[]) =>
          trip(meter, statements.length, () => target.batch(statements));
      }
      if (name === 'exec')
        throw new Error('exec() is not metered: no code path of the model uses it');
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A `DELIVERIES` stand-in that counts and keeps every message, for the consumer to run later. */
export function meteredQueue(meter: Meter, sent: unknown[]): Queue {
  return {
    metrics: async () => ({ backlogCount: 0, backlogBytes: 0 }),
    send: async (body) => {
      meter.queueSendCalls++;
      meter.queueMessages++;
      sent.push(body);
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
    },
    sendBatch: async (messages) => {
      meter.queueSendCalls++;
      for (const message of messages) {
        meter.queueMessages++;
        sent.push(message.body);
      }
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
    },
  };
}

/** A Durable Object namespace whose stubs count each method call (one billed request each). */
export function meteredNamespace<T extends object>(meter: Meter, binding: string, namespace: T): T {
  const count = () => {
    meter.objectRequests[binding] = (meter.objectRequests[binding] ?? 0) + 1;
  };
  const meteredStub = (stub: object) =>
    new Proxy(stub, {
      get: (target, name) => {
        const value = Reflect.get(target, name);
        if (typeof value !== 'function' || name === 'then') return value;
        return (...args: unknown[]) => {
          count();
          return Reflect.apply(value, target, args);
        };
      },
    });
  return new Proxy(namespace, {
    get: (target, name) => {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      if (name !== 'getByName' && name !== 'get') return value.bind(target);
      return (...args: unknown[]) => meteredStub(Reflect.apply(value, target, args) as object);
    },
  });
}

/**
 * Runs `work` with the global `fetch` counted into `meter` (the Worker, the consumer and the
 * outboxes run in this isolate, so their subrequests go through it).
 */
export async function withMeteredFetch<T>(meter: Meter, work: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    meter.fetches++;
    return original(input, init);
  }) as typeof fetch;
  try {
    return await work();
  } finally {
    globalThis.fetch = original;
  }
}

/**
 * A D1 database's size in bytes now (`meta.size_after` of a read; not metered).
 *
 * @param db - the database. @default env.DB
 */
export async function databaseBytes(db: D1Database = env.DB): Promise<number> {
  const result = await db.prepare('SELECT 1').run();
  const size = (result.meta as { size_after?: number }).size_after;
  if (typeof size !== 'number') throw new Error('D1 reported no size_after');
  return size;
}
