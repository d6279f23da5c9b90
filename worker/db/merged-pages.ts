/**
 * Keyset pages of the admin listings read from every event shard (worker/db/event-shards.ts)
 * and merged into one: each shard reads one page with the same cursor, and the merged page
 * takes the newest rows of them all, in the order one database would give (time descending,
 * then id descending in SQLite's BINARY order). Its cursor is the last row taken, so the
 * next page starts strictly after it in every shard: every row older than the cursor is
 * still ahead, every row taken is behind, whatever arrives meanwhile.
 */
import { type KeysetCursor, type KeysetPage, type KeysetQuery, keysetPage } from './keyset.ts';

/**
 * Orders two keys newest first, as the listings' `ORDER BY time DESC, id DESC` does: the
 * later time first, then the greater id in SQLite's BINARY order (UTF-8 bytes, which is
 * code point order; JavaScript's `<` compares UTF-16 units and would put U+FFFF after an
 * astral character).
 *
 * @returns negative when `a` comes first, positive when `b` does, 0 for the same key.
 * @internal Exported for the tests, which check it against D1's own order.
 */
export function compareNewestFirst(a: KeysetCursor, b: KeysetCursor): number {
  if (a.at !== b.at) return b.at - a.at;
  return compareBinary(b.id, a.id);
}

/**
 * Merges one page per shard, each read with the same cursor and page size, into the page
 * one database holding all their rows would have given.
 *
 * @param pages - the shards' pages (rows newest first, at most `pageSize` each; `next` set
 *   when the shard had more).
 * @param pageSize - rows per page, at least 1.
 * @param keyOf - the (time, id) of a row.
 * @returns the `pageSize` newest rows, newest first; `next` is the key of the last row taken
 *   when any shard had a row that was not taken, else `null`. One page is returned as given.
 * @internal Exported for the tests, which walk pages merged from in-memory shards.
 */
export function mergeKeysetPages<Row>(
  pages: readonly KeysetPage<Row>[],
  pageSize: number,
  keyOf: (row: Row) => KeysetCursor,
): KeysetPage<Row> {
  if (pages.length === 1 && pages[0] !== undefined) return pages[0];
  const merged = pages
    .flatMap((page) => page.rows.map((row) => ({ row, key: keyOf(row) })))
    .sort((a, b) => compareNewestFirst(a.key, b.key));
  const taken = merged.slice(0, pageSize);
  const more = merged.length > taken.length || pages.some((page) => page.next !== null);
  const last = taken.at(-1);
  return { rows: taken.map(({ row }) => row), next: more && last !== undefined ? last.key : null };
}

/**
 * Reads one page of `query` from each database, in parallel, and merges them
 * ({@link mergeKeysetPages}): one query per database, whatever the page.
 *
 * @param dbs - the D1 bindings of every event shard (one: exactly {@link keysetPage}).
 * @param query - the select, keys, filters, cursor and page size, the same for each.
 * @param keyOf - the (time, id) of a row.
 * @throws whatever D1 throws.
 */
export async function mergedKeysetPage<Row>(
  dbs: readonly D1Database[],
  query: KeysetQuery,
  keyOf: (row: Row) => KeysetCursor,
): Promise<KeysetPage<Row>> {
  const pages = await Promise.all(dbs.map((db) => keysetPage(db, query, keyOf)));
  return mergeKeysetPages(pages, query.pageSize, keyOf);
}

/**
 * The D1 databases a listing reads: one binding as before, or every event shard's.
 *
 * @param db - a binding, or several.
 */
export function databasesOf(db: D1Database | readonly D1Database[]): readonly D1Database[] {
  return 'prepare' in db ? [db] : db;
}

// Surrogates (astral characters) rank above the rest of the BMP, as their code points do.
function rank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

function compareBinary(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}
