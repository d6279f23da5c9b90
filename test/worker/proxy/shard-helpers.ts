/**
 * The sharding tests' three D1 databases (test/support/worker-test-options.ts binds the two
 * beside `DB`) and where a key's row is.
 */
import { env } from 'cloudflare:workers';
import { findIdempotencyKey } from '../../../worker/db/idempotency-keys.ts';
import { CALLER_NAME } from '../helpers.ts';

/** The test databases, in placement order. */
export const SHARDS = ['DB', 'DB_SHARD_1', 'DB_SHARD_2'] as const;

/** One of {@link SHARDS}. */
export type ShardName = (typeof SHARDS)[number];

/** The test's databases by binding name. */
export function database(name: ShardName): D1Database {
  return env[name];
}

/** The shards holding a row of `key` for the test caller. */
export async function holders(key: string): Promise<ShardName[]> {
  const found = await Promise.all(
    SHARDS.map(async (name) =>
      (await findIdempotencyKey(database(name), CALLER_NAME, key)) ? name : undefined,
    ),
  );
  return found.filter((name): name is ShardName => name !== undefined);
}
