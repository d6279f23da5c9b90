/**
 * The retention purge of an object's rows by its alarm: a bounded number of delete
 * statements per run, the next run at the earliest expiry left but no sooner than an hour
 * (so a busy object does not wake, and write its alarm, once per row), and the alarm written
 * only when none is set or a later one is. Times are epoch milliseconds.
 */

/** Most rows one purge statement deletes, and most statements one alarm runs. */
const PURGE_BATCH_ROWS = 1_000;
const PURGE_MAX_STATEMENTS = 20;
/** The least time between two purges of one object, in milliseconds. */
const SWEEP_INTERVAL_MS = 3_600_000;
/** When a purge that did not finish continues, in milliseconds. */
const SWEEP_CONTINUE_MS = 1_000;

/** What one object purges: its delete of expired rows, and its earliest expiry left. */
export interface PurgeRows {
  /**
   * Deletes at most `limit` rows expired at `now` (epoch ms).
   *
   * @returns how many it deleted.
   */
  deleteExpired(now: number, limit: number): number;
  /** The earliest expiry (epoch ms) of a row the purge will delete, `null` when none. */
  nextExpiry(): number | null;
}

/** Which rows of a table expire, by which column. */
export interface ExpiringRows {
  readonly table: string;
  /** The primary key's columns, as SQL (`event_id`, `caller, idempotency_key`). */
  readonly key: string;
  /** The column holding each row's expiry, epoch ms. */
  readonly expiresAt: string;
  /** SQL a row must also meet to be purged; none: every expired row. */
  readonly only?: string;
}

/**
 * The {@link PurgeRows} of `rows` in an object's SQLite: a delete of expired rows by primary
 * key, a bounded number at a time, and the earliest expiry left.
 *
 * @param sql - the object's `ctx.storage.sql`.
 * @param rows - the table, its key, its expiry column and any further condition.
 */
export function expiringRows(sql: SqlStorage, rows: ExpiringRows): PurgeRows {
  const { table, key, expiresAt } = rows;
  const only = rows.only === undefined ? '' : ` AND ${rows.only}`;
  return {
    deleteExpired: (now, limit) =>
      sql.exec(
        `DELETE FROM ${table} WHERE (${key}) IN
           (SELECT ${key} FROM ${table} WHERE ${expiresAt} <= ?${only} LIMIT ?)`,
        now,
        limit,
      ).rowsWritten,
    nextExpiry: () =>
      sql
        .exec<{ at: number | null }>(
          `SELECT min(${expiresAt}) AS at FROM ${table} WHERE 1 = 1${only}`,
        )
        .one().at,
  };
}

/** One object's purge alarm (see the top of this file). */
export class PurgeAlarm {
  readonly #storage: DurableObjectStorage;
  readonly #rows: PurgeRows;
  /** The alarm as last read or set (`null`: none); `undefined` until first read. */
  #alarmAt: number | null | undefined;

  /**
   * @param storage - the object's storage (its alarm).
   * @param rows - what the purge deletes.
   */
  constructor(storage: DurableObjectStorage, rows: PurgeRows) {
    this.#storage = storage;
    this.#rows = rows;
  }

  /**
   * Makes sure a purge runs by `at` (epoch ms): writes the alarm only when there is none or
   * a later one.
   */
  async by(at: number): Promise<void> {
    if (this.#alarmAt === undefined) this.#alarmAt = await this.#storage.getAlarm();
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    await this.#storage.setAlarm(at);
  }

  /** The alarm's run: deletes what expired, then sets the next run (see the top of this file). */
  async run(): Promise<void> {
    const now = Date.now();
    this.#alarmAt = null;
    let finished = false;
    for (let statement = 0; statement < PURGE_MAX_STATEMENTS && !finished; statement++) {
      finished = this.#rows.deleteExpired(now, PURGE_BATCH_ROWS) < PURGE_BATCH_ROWS;
    }
    if (!finished) {
      await this.by(now + SWEEP_CONTINUE_MS);
      return;
    }
    const next = this.#rows.nextExpiry();
    if (next !== null) await this.by(Math.max(next, now + SWEEP_INTERVAL_MS));
  }
}
