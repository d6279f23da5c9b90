/**
 * Where the relay's webhook events live when storage is spread over several D1 databases
 * (`D1_SHARDS`, worker/db/shards.ts): an event, its deliveries and their attempts are kept
 * together in the shard its `event_id` is placed in, under the generation in effect when it
 * was received, for the whole relay retention. Subscriptions are not spread: they stay in
 * `DB` (worker/db/subscription-snapshot.ts gives a shard's queries their copy). A queue
 * message about a delivery or an event names the shard it is in, so nothing is searched.
 */
import type { Settings } from '../config.ts';
import { shardDatabase } from './shard-bindings.ts';
import { everyShard, placeKey } from './shards.ts';

/** The binding that holds the subscriptions, and every event when there is one shard. */
export const MAIN_SHARD = 'DB';

/**
 * Longest an ingest takes from reading the clock to its look in the other generation, plus
 * the largest difference between two isolates' clocks, in milliseconds: an event received
 * this close before a generation's start is also looked for in that generation's shard, and
 * a row found elsewhere that is older than this was written by a request that has finished.
 */
const EVENT_SWITCH_WINDOW_MS = 120_000;

const DAY_MS = 86_400_000;

/** One event shard: its binding name (what queue messages carry) and its database. */
export interface EventShard {
  /** The D1 binding name, as `D1_SHARDS` lists it. */
  readonly name: string;
  readonly db: D1Database;
}

/** Where one event is written, and the shards that may already hold it. */
export interface EventPlacement {
  /** The event's shard in the generation in effect: a new event is stored there. */
  readonly home: EventShard;
  /**
   * Its shards in the other generations that may hold it (an older one whose events are
   * still kept, a later one about to start), oldest first; none outside a change of shards.
   */
  readonly others: readonly EventShard[];
}

/**
 * Places an event received at `now`: its home shard and the others that may hold it.
 *
 * @param env - the Worker's bindings (the D1 databases `D1_SHARDS` names).
 * @param settings - `shards` and `relayRetentionDays` (days).
 * @param eventId - the provider's `event_id`.
 * @param now - epoch milliseconds.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding.
 */
export async function placeEvent(
  env: object,
  settings: Settings,
  eventId: string,
  now: number,
): Promise<EventPlacement> {
  const placement = await placeKey(settings.shards, eventId, now, {
    lookBackMs: settings.relayRetentionDays * DAY_MS + EVENT_SWITCH_WINDOW_MS,
    switchWindowMs: EVENT_SWITCH_WINDOW_MS,
  });
  return {
    home: eventShardNamed(env, placement.home),
    others: placement.others.map((name) => eventShardNamed(env, name)),
  };
}

/**
 * Every shard that may hold an event with this id at `now`, home first: where a read by
 * event id looks (the first that has it answers).
 *
 * @param env - the Worker's bindings.
 * @param settings - `shards` and `relayRetentionDays`.
 * @param eventId - the provider's `event_id`.
 * @param now - epoch milliseconds.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding.
 */
export async function eventShardsOf(
  env: object,
  settings: Settings,
  eventId: string,
  now: number,
): Promise<readonly EventShard[]> {
  const { home, others } = await placeEvent(env, settings, eventId, now);
  return [home, ...others];
}

/**
 * The shard a queue message or a stored reference names.
 *
 * @param env - the Worker's bindings.
 * @param name - the binding name; `undefined` (a message queued before messages named
 *   their shard): {@link MAIN_SHARD}.
 * @throws {HttpError} 503 `configuration_error` when no D1 database is bound under `name`.
 */
export function eventShardNamed(env: object, name: string | undefined): EventShard {
  const binding = name ?? MAIN_SHARD;
  return { name: binding, db: shardDatabase(env, binding) };
}

/**
 * Every shard any generation names, each once: what listings, counts, the sweeper and the
 * retention purge visit (a retired generation keeps its events until they are purged).
 *
 * @param env - the Worker's bindings.
 * @param settings - `shards`.
 * @throws {HttpError} 503 `configuration_error` when `D1_SHARDS` names a missing binding.
 */
export function everyEventShard(env: object, settings: Settings): readonly EventShard[] {
  return everyShard(settings.shards).map((name) => eventShardNamed(env, name));
}

/**
 * The shard a queue message body names in its `shard` field (a delivery's, a confirmation
 * check's); {@link MAIN_SHARD} when it names none.
 *
 * @param env - the Worker's bindings.
 * @param body - the message body as received (any shape).
 * @throws {HttpError} 503 `configuration_error` when no D1 database is bound under the name.
 */
export function shardOfMessage(env: object, body: unknown): EventShard {
  const name =
    typeof body === 'object' && body !== null ? (body as { shard?: unknown }).shard : undefined;
  return eventShardNamed(env, typeof name === 'string' ? name : undefined);
}
