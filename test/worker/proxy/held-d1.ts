/**
 * The real D1 binding wrapped so that the statements matching a pattern wait at a gate the
 * test opens (or never opens: the isolate died before the write reached D1), with every
 * round trip logged by the start of its SQL when it ends.
 */
import { env } from 'cloudflare:workers';

/** How the held statements end when the gate opens. */
type GateOpening = 'land' | 'fail';

function nameOf(sqls: readonly string[]): string {
  return sqls.map((sql) => sql.trim().slice(0, 30)).join(' + ');
}

/** A D1 binding whose matching statements wait at a gate; see {@link heldD1}. */
class HeldD1 implements D1Database {
  /** Round trips by the start of their SQL, in the order they ended. */
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
