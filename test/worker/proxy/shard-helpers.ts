/**
 * The sharding tests' three D1 databases (test/support/worker-test-options.ts binds the two
 * beside `DB`) and where a key's row is.
 */
import { findIdempotencyKey } from '../../../worker/db/idempotency-keys.ts';
import { CALLER_NAME } from '../helpers.ts';
import { database, SHARDS, type ShardName } from '../shard-databases.ts';

export { database, SHARDS, type ShardName } from '../shard-databases.ts';

/** The shards holding a row of `key` for the test caller. */
export async function holders(key: string): Promise<ShardName[]> {
  const found = await Promise.all(
    SHARDS.map(async (name) =>
      (await findIdempotencyKey(database(name), CALLER_NAME, key)) ? name : undefined,
    ),
  );
  return found.filter((name): name is ShardName => name !== undefined);
}
