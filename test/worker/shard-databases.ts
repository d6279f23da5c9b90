/**
 * The three D1 databases the sharding tests spread storage over (test/support/worker-test-options.ts
 * binds the two beside `DB`), the setting that names them, and event ids chosen by the real
 * placement rule for a given shard.
 */
import { env } from 'cloudflare:workers';
import { settingsOf } from '../../worker/config.ts';
import { placeEvent } from '../../worker/db/event-shards.ts';

/** The test databases, in placement order. */
export const SHARDS = ['DB', 'DB_SHARD_1', 'DB_SHARD_2'] as const;

/** One of {@link SHARDS}. */
export type ShardName = (typeof SHARDS)[number];

/** `D1_SHARDS` with one generation of the three test databases. */
export const THREE_SHARDS_SETTING = SHARDS.join(',');

/** The bindings override of a Worker spreading over the three test databases. */
export const THREE_SHARDS: Partial<Env> = { D1_SHARDS: THREE_SHARDS_SETTING };

/** The test's database bound as `name`. */
export function database(name: ShardName): D1Database {
  return env[name];
}

/** Most ids drawn to find one placed in a given shard (one in three is: never reached). */
const MAX_DRAWS = 200;

/**
 * A fresh event id `<prefix><uuid>` that the real placement puts in `shard` under
 * {@link THREE_SHARDS} (the whole id is what is placed).
 *
 * @throws when no draw lands there (a placement rule gone wrong).
 */
export async function eventIdIn(shard: ShardName, prefix = 'evt_'): Promise<string> {
  const sharded = { ...env, ...THREE_SHARDS } as Env;
  const settings = settingsOf(sharded);
  for (let draw = 0; draw < MAX_DRAWS; draw += 1) {
    const eventId = `${prefix}${crypto.randomUUID()}`;
    const { home } = await placeEvent(sharded, settings, eventId, Date.now());
    if (home.name === shard) return eventId;
  }
  throw new Error(`no event id placed in ${shard} after ${MAX_DRAWS} draws`);
}
