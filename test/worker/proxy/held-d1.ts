/**
 * What the caller of the gateway waits for: the real D1 binding wrapped so that the
 * statements matching a pattern wait at a gate the test opens (or never opens: the isolate
 * died before the write reached D1), with every round trip logged by name when it ends; an
 * ExecutionContext whose `waitUntil` keeps or drops the work handed to it; and the real
 * Worker's fetch, which marks `answer` in the same log when its response resolves.
 */
import { env } from 'cloudflare:workers';
import worker from '../../../worker/index.ts';

/** How the held statements end when the gate opens. */
type GateOpening = 'land' | 'fail';

/** The statements of worker/db/idempotency-keys.ts, by what they do, to name round trips. */
export const IDEMPOTENCY_STATEMENTS = {
  claim: /^\s*INSERT INTO idempotency_keys/,
  complete: /SET state = 'completed'/,
  lock: /^UPDATE idempotency_keys SET locked_until = \?4 WHERE [\s\S]*locked_until = \?3/,
  release: /^DELETE FROM idempotency_keys WHERE [\s\S]*locked_until = \?3/,
} as const;

function nameOf(sqls: readonly string[]): string {
  for (const [name, pattern] of Object.entries(IDEMPOTENCY_STATEMENTS)) {
    if (sqls.some((sql) => pattern.test(sql))) return name;
  }
  return sqls.map((sql) => sql.trim().slice(0, 30)).join(' + ');
}

/** A D1 binding whose matching statements wait at a gate; see {@link heldD1}. */
class HeldD1 implements D1Database {
  /** Round trips by name (`claim`, `complete`, `lock`, `release`...) in the order they ended, and the marks. */
  readonly log: string[] = [];
  /** Resolves once a statement matching the pattern waits at the gate. */
  readonly held: Promise<void>;
  readonly #real: D1Database;
  readonly #hold: RegExp | undefined;
  readonly #gate: Promise<GateOpening>;
  #open: (how: GateOpening) => void = () => undefined;
  #markHeld: () => void = () => undefined;

  constructor(real: D1Database, hold: RegExp | undefined) {
    this.#real = real;
    this.#hold = hold;
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
    this.held = new Promise((resolve) => {
      this.#markHeld = resolve;
    });
  }

  /** Opens the gate: the held statements run (`land`) or reject as a dropped D1 connection does (`fail`). */
  release(how: GateOpening): void {
    this.#open(how);
  }

  /** Runs one round trip of `sqls`, waiting at the gate first when one of them matches. */
  async trip<T>(sqls: readonly string[], call: () => Promise<T>): Promise<T> {
    const name = nameOf(sqls);
    if (this.#hold !== undefined && sqls.some((sql) => this.#hold?.test(sql))) {
      this.#markHeld();
      if ((await this.#gate) === 'fail') {
        this.log.push(`${name} failed`);
        throw new Error(`D1_ERROR: Network connection lost (held ${name} failed)`);
      }
    }
    try {
      return await call();
    } finally {
      this.log.push(name);
    }
  }

  prepare(query: string): D1PreparedStatement {
    return new HeldStatement(this, this.#real.prepare(query), query);
  }

  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    const held = statements.filter((s): s is HeldStatement => s instanceof HeldStatement);
    const real = statements.map((s) => (s instanceof HeldStatement ? s.real : s));
    return this.trip(
      held.map((s) => s.sql),
      () => this.#real.batch<T>(real),
    );
  }

  exec(query: string): Promise<D1ExecResult> {
    return this.trip([query], () => this.#real.exec(query));
  }

  withSession(constraintOrBookmark?: D1SessionBookmark | D1SessionConstraint): D1DatabaseSession {
    return this.#real.withSession(constraintOrBookmark);
  }

  dump(): Promise<ArrayBuffer> {
    return this.#real.dump();
  }
}

class HeldStatement implements D1PreparedStatement {
  readonly owner: HeldD1;
  readonly real: D1PreparedStatement;
  readonly sql: string;

  constructor(owner: HeldD1, real: D1PreparedStatement, sql: string) {
    this.owner = owner;
    this.real = real;
    this.sql = sql;
  }

  bind(...values: unknown[]): D1PreparedStatement {
    return new HeldStatement(this.owner, this.real.bind(...values), this.sql);
  }

  first<T = unknown>(colName: string): Promise<T | null>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  first<T>(colName?: string): Promise<T | null> {
    return this.owner.trip([this.sql], () =>
      colName === undefined ? this.real.first<T>() : this.real.first<T>(colName),
    );
  }

  run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.owner.trip([this.sql], () => this.real.run<T>());
  }

  all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.owner.trip([this.sql], () => this.real.all<T>());
  }

  raw<T = unknown[]>(options: { columnNames: true }): Promise<[string[], ...T[]]>;
  raw<T = unknown[]>(options?: { columnNames?: false }): Promise<T[]>;
  raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<[string[], ...T[]] | T[]> {
    return options?.columnNames === true
      ? this.owner.trip([this.sql], () => this.real.raw<T>({ columnNames: true }))
      : this.owner.trip([this.sql], () => this.real.raw<T>({ columnNames: false }));
  }
}

/**
 * A real D1 database with the statements matching `hold` waiting until `release`, and
 * every round trip logged as it ends.
 *
 * @param hold - the statements to hold (`undefined`: none, only the log).
 * @param real - the database wrapped. @default env.DB
 */
export function heldD1(hold?: RegExp, real: D1Database = env.DB): HeldD1 {
  return new HeldD1(real, hold);
}

/** An ExecutionContext of the test's own: what `waitUntil` was given, kept or dropped. */
interface TestContext {
  readonly ctx: ExecutionContext;
  /** How many promises `waitUntil` was given. */
  readonly handed: () => number;
  /** Settles when every kept promise has (the `drop` context keeps none). */
  settled(): Promise<void>;
}

/**
 * An ExecutionContext whose `waitUntil` keeps the work (`keep`, then awaited by
 * `settled`) or drops it (`drop`: the isolate dies once the answer is out, as the platform
 * may end it; nothing waits for that work).
 */
export function testContext(mode: 'keep' | 'drop'): TestContext {
  const kept: Promise<unknown>[] = [];
  let handed = 0;
  const ctx = {
    waitUntil(work: Promise<unknown>) {
      handed++;
      if (mode === 'keep') kept.push(work.catch(() => undefined));
    },
    passThroughOnException() {},
    props: {},
  } as unknown as ExecutionContext;
  return {
    ctx,
    handed: () => handed,
    async settled() {
      await Promise.all(kept);
    },
  };
}

/** A request to the real Worker, running: its response, and whether it has resolved yet. */
interface Running {
  readonly response: Promise<Response>;
  answered(): boolean;
}

/**
 * Calls the real Worker's fetch with `db` as `DB` and the test's own `ctx`, not waiting:
 * `answer` is marked in `db.log` when the response resolves.
 */
export function startGateway(
  request: Request,
  db: HeldD1,
  context: TestContext,
  overrides: Partial<Env> = {},
): Running {
  let answered = false;
  const incoming = request as Request<unknown, IncomingRequestCfProperties>;
  const response = Promise.resolve(
    worker.fetch(incoming, { ...env, ...overrides, DB: db }, context.ctx),
  ).then((res) => {
    answered = true;
    db.log.push('answer');
    return res;
  });
  return { response, answered: () => answered };
}

/**
 * Whether `running` was answered while a statement waits at `db`'s gate: waits until one
 * is held, then for one D1 round trip of its own (an answer that needs no more I/O has
 * resolved by then: pending promise callbacks all run before any I/O completes).
 */
export async function answeredWhileHeld(db: HeldD1, running: Running): Promise<boolean> {
  await db.held;
  await env.DB.prepare('SELECT 1').first();
  return running.answered();
}
