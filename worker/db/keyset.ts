/**
 * Keyset pagination of the admin listings: newest first on a (time, id) pair, each page
 * starting strictly after the last row of the one before, so rows arriving meanwhile
 * never shift a page the way an offset would. Only the filters given become conditions,
 * each a plain comparison, so SQLite can pick the index that starts with the filtered
 * column (`?1 IS NULL OR col = ?1` would hide every index behind the OR). `db` is the D1 binding.
 */

/** Where a page starts: strictly after this (time, id), newest first. */
export interface KeysetCursor {
  /** The ordering time of the last row shown, epoch milliseconds. */
  readonly at: number;
  /** Its id, the tie-breaker between rows of the same millisecond. */
  readonly id: string;
}

/**
 * A filter of a listing: a condition with exactly one `?` for its value, left out when
 * the value is `null` (no filter). Conditions are constant text; values are only bound.
 */
type KeysetFilter = readonly [condition: string, value: string | number | null];

/** What {@link keysetPage} reads. */
export interface KeysetQuery {
  /** `SELECT <columns> FROM <tables>`, without WHERE, ORDER BY or LIMIT. */
  readonly select: string;
  /** The time and id columns ordering the page, both NOT NULL, e.g. `['received_at', 'event_id']`. */
  readonly keys: readonly [time: string, id: string];
  readonly filters: readonly KeysetFilter[];
  /** The cursor of the page asked for; `null` for the first page. */
  readonly after: KeysetCursor | null;
  /** Rows per page, at least 1. */
  readonly pageSize: number;
}

/** One page of rows and the cursor of the next, `null` on the last page. */
export interface KeysetPage<Row> {
  readonly rows: Row[];
  readonly next: KeysetCursor | null;
}

/**
 * Reads one page, newest first (ties by id, descending): one row more than the page is
 * asked for, to know whether a next page exists without counting.
 *
 * @param query - the select, the ordering keys, the filters, the cursor and the page size.
 * @param keyOf - the (time, id) of a row, from which the next cursor is made.
 * @returns the page; `next` is set when at least one more row exists.
 * @throws whatever D1 throws.
 */
export async function keysetPage<Row>(
  db: D1Database,
  query: KeysetQuery,
  keyOf: (row: Row) => KeysetCursor,
): Promise<KeysetPage<Row>> {
  const values: Array<string | number> = [];
  const bind = (value: string | number): string => {
    values.push(value);
    return `?${values.length}`;
  };
  const conditions = query.filters.flatMap(([condition, value]) =>
    value === null ? [] : [condition.replace('?', bind(value))],
  );
  const [time, id] = query.keys;
  if (query.after !== null) {
    // A row value comparison: (time < at) OR (time = at AND id < id), served by the index.
    conditions.push(`(${time}, ${id}) < (${bind(query.after.at)}, ${bind(query.after.id)})`);
  }
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  const { results } = await db
    .prepare(
      `${query.select} ${where} ORDER BY ${time} DESC, ${id} DESC LIMIT ${bind(query.pageSize + 1)}`,
    )
    .bind(...values)
    .all<Row>();
  const rows = results.slice(0, query.pageSize);
  const last = rows.at(-1);
  const next = results.length > query.pageSize && last !== undefined ? keyOf(last) : null;
  return { rows, next };
}
