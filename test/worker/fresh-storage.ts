/**
 * Runs before each worker test file: `DB` migrated and every test database and the KV cache
 * emptied, so each file starts from fresh storage.
 *
 * The worker project reuses one workerd for many files (`isolate: false`: starting one per
 * file cost about 1.8 s each, most of the project's time), and a workerd keeps its D1 and KV
 * from file to file. Emptying them here gives every file what a fresh workerd gave it: no
 * subscription, delivery or cached answer left by another file. The shard databases are
 * migrated by the files that use them (test/worker/shard-databases.ts) and emptied here.
 */
import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

/** Deleting a row can fire a trigger that writes another table: a few passes settle it. */
const MAX_PASSES = 4;

/** Deletes every row of every table of `db` but the migrations' own record. */
async function emptyDatabase(db: D1Database): Promise<void> {
  const { results } = await db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' " +
        "AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
    )
    .all<{ name: string }>();
  const tables = results.map(({ name }) => name);
  if (tables.length === 0) return;
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const counts = await db.batch<{ rows: number }>(
      tables.map((table) => db.prepare(`SELECT COUNT(*) AS rows FROM "${table}"`)),
    );
    const filled = tables.filter((_, index) => (counts[index]?.results[0]?.rows ?? 0) > 0);
    if (filled.length === 0) return;
    await db.batch([
      db.prepare('PRAGMA defer_foreign_keys = true'),
      ...filled.map((table) => db.prepare(`DELETE FROM "${table}"`)),
    ]);
  }
  throw new Error(`test storage: rows are still left after ${MAX_PASSES} passes`);
}

/** Deletes every key of a KV namespace. */
async function emptyNamespace(kv: KVNamespace): Promise<void> {
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown> = await kv.list(
      cursor === undefined ? {} : { cursor },
    );
    await Promise.all(page.keys.map(({ name }) => kv.delete(name)));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor !== undefined);
}

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await Promise.all([
  emptyDatabase(env.DB),
  emptyDatabase(env.DB_SHARD_1),
  emptyDatabase(env.DB_SHARD_2),
  emptyNamespace(env.CACHE),
]);
