/**
 * Properties of the merge of keyset pages (worker/db/merged-pages.ts): keys are ordered as
 * D1 orders `time DESC, id DESC`; a walk over random rows spread over one to four shards,
 * each answering one page per request after the same cursor, lists every row exactly once
 * in that order, with a page size kept and the last page alone without a cursor, even when
 * newer rows arrive between pages; one shard's page is answered as it is.
 */
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KeysetCursor, KeysetPage } from '../../../worker/db/keyset.ts';
import { compareNewestFirst, mergeKeysetPages } from '../../../worker/db/merged-pages.ts';
import { FUZZ_PARAMETERS, fuzzTimeout } from '../fuzz-helpers.ts';

/** Characters around the places where UTF-16 and UTF-8 orders part (surrogates, U+E000). */
const ID_UNIT = fc.constantFrom(
  'a',
  'b',
  'Z',
  '_',
  '\u00e9',
  '\ud7ff',
  '\ue000',
  '\uffff',
  '😀',
  '\u{10ffff}',
);
const KEY = fc.record({
  at: fc.integer({ min: 0, max: 12 }),
  id: fc.string({ unit: ID_UNIT, maxLength: 3 }),
});
const sameKey = (a: KeysetCursor, b: KeysetCursor) => a.at === b.at && a.id === b.id;

/** Rows with distinct keys, each in one of `shards` shards. */
const spread = (shards: number) =>
  fc.uniqueArray(fc.record({ key: KEY, shard: fc.nat({ max: shards - 1 }) }), {
    selector: (row) => `${row.key.at}:${row.key.id}`,
    maxLength: 30,
  });

type Row = { readonly key: KeysetCursor; readonly shard: number };

/** One shard's keyset page, as keysetPage reads it: after the cursor, one row more than asked. */
function shardPage(
  rows: readonly Row[],
  after: KeysetCursor | null,
  size: number,
): KeysetPage<Row> {
  const ahead = rows
    .filter((row) => after === null || compareNewestFirst(after, row.key) < 0)
    .sort((a, b) => compareNewestFirst(a.key, b.key))
    .slice(0, size + 1);
  const page = ahead.slice(0, size);
  const last = page.at(-1);
  return { rows: page, next: ahead.length > size && last !== undefined ? last.key : null };
}

describe('merged keyset pages', () => {
  describe('compareNewestFirst', () => {
    it(
      'should order keys as D1 orders time DESC, id DESC',
      async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(KEY, { maxLength: 12 }), async (keys) => {
            const { results } = await env.DB.prepare(
              `SELECT j.value ->> '$.at' AS at, j.value ->> '$.id' AS id FROM json_each(?1) AS j
               ORDER BY at DESC, id DESC`,
            )
              .bind(JSON.stringify(keys))
              .all<KeysetCursor>();
            expect([...keys].sort(compareNewestFirst)).toEqual(results);
          }),
          FUZZ_PARAMETERS,
        );
      },
      fuzzTimeout(5),
    );
  });

  describe('mergeKeysetPages', () => {
    it(
      'should walk every row of every shard once, newest first, while newer rows arrive',
      () => {
        fc.assert(
          fc.property(
            fc
              .integer({ min: 1, max: 4 })
              .chain((shards) =>
                fc.tuple(fc.constant(shards), spread(shards), fc.integer({ min: 1, max: 7 })),
              ),
            fc.array(fc.nat({ max: 3 }), { maxLength: 40 }),
            ([shards, rows, size], arrivals) => {
              const stored: Row[] = [...rows];
              const seen: Row[] = [];
              const sizes: number[] = [];
              let cursor: KeysetCursor | null = null;
              // A walk reads at most one page per row, and one for none.
              for (let read = 0; read <= rows.length; read += 1) {
                const pages = Array.from({ length: shards }, (_, shard) =>
                  shardPage(
                    stored.filter((row) => row.shard === shard),
                    cursor,
                    size,
                  ),
                );
                const page = mergeKeysetPages(pages, size, (row) => row.key);
                seen.push(...page.rows);
                sizes.push(page.rows.length);
                if (page.next !== null)
                  expect(sameKey(page.next, page.rows.at(-1)?.key ?? page.next)).toBe(true);
                cursor = page.next;
                if (cursor === null) break;
                // A row arriving now is newer than every stored one.
                stored.push({
                  key: { at: 100 + read, id: 'new' },
                  shard: (arrivals[read] ?? 0) % shards,
                });
              }
              expect(cursor).toBeNull();
              expect(seen.map((row) => row.key)).toEqual(
                rows.map((row) => row.key).sort(compareNewestFirst),
              );
              const full = Math.floor(rows.length / size);
              const rest = rows.length % size;
              const expected = Array.from({ length: full }, () => size);
              expect(sizes).toEqual(rest > 0 || full === 0 ? [...expected, rest] : expected);
            },
          ),
          FUZZ_PARAMETERS,
        );
      },
      fuzzTimeout(2),
    );

    it('should answer the one page of one shard as it is', () => {
      fc.assert(
        fc.property(spread(1), fc.integer({ min: 1, max: 7 }), (rows, size) => {
          const page = shardPage(rows, null, size);
          expect(mergeKeysetPages([page], size, (row) => row.key)).toBe(page);
        }),
        FUZZ_PARAMETERS,
      );
    });
  });
});
