/**
 * The subscriptions as the fan-out reads them: an event stored on an event shard other than
 * `DB` (at ingress, on confirmation, and the relay's own events) and the ordered-delivery
 * check join a snapshot of them. Each isolate keeps one copy of every subscription (a
 * deployment has a handful) for `SUBSCRIPTION_CACHE_SEC` seconds, so an event costs `DB` no
 * query: `DB` holds every subscription, and a query there per event is the ceiling no number
 * of event shards lifts. Every write of a subscription forgets this isolate's copy at once;
 * other isolates see a change once their copy is older than the setting. Each outbox keeps
 * its own copy of its subscription (worker/relay/outbox-subscription.ts), which the admin API
 * tells of a change.
 */
import { loadSettings } from '../config.ts';
import { type EventShard, MAIN_SHARD } from './event-shards.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotOf,
} from './subscription-snapshot.ts';
import { listSubscriptions, type SubscriptionRecord } from './subscriptions.ts';

/** Every subscription as one isolate last read it. */
export interface SubscriptionDirectory {
  /** The records by id. */
  readonly byId: ReadonlyMap<string, SubscriptionRecord>;
  /** The same, as an event shard's statements bind them (worker/db/subscription-snapshot.ts). */
  readonly snapshot: SubscriptionsView;
}

/** A copy of the directory and when it was read, epoch milliseconds. */
interface Copy {
  readonly readAt: number;
  readonly directory: Promise<SubscriptionDirectory>;
}

// One per isolate: every Worker and object of a deployment reads the same `DB`.
let copy: Copy | undefined;

/**
 * Every subscription, from this isolate's copy while it is younger than
 * `SUBSCRIPTION_CACHE_SEC`, else read from `DB` now (one query, shared by the calls that
 * arrive while it runs).
 *
 * @param env - the `DB` binding and the setting (unreadable settings: no cache).
 * @param now - the current time, epoch milliseconds.
 * @throws whatever D1 throws reading them (nothing is kept then).
 */
export function cachedSubscriptions(env: Env, now = Date.now()): Promise<SubscriptionDirectory> {
  const loaded = loadSettings(env);
  const lifetimeMs = loaded.ok ? loaded.settings.subscriptionCacheSec * 1000 : 0;
  if (copy !== undefined && now - copy.readAt < lifetimeMs) return copy.directory;
  const directory = readDirectory(env.DB);
  if (lifetimeMs > 0) {
    copy = { readAt: now, directory };
    directory.catch(() => {
      if (copy?.directory === directory) copy = undefined;
    });
  }
  return directory;
}

/**
 * The view a statement on `shard` needs to fan an event out: the table on `DB`, else the
 * snapshot of this isolate's copy ({@link cachedSubscriptions}).
 *
 * @param env - the `DB` binding and the setting.
 * @param shard - where the statement runs.
 * @throws whatever D1 throws reading the subscriptions.
 */
export async function cachedSubscriptionsView(
  env: Env,
  shard: EventShard,
): Promise<SubscriptionsView> {
  if (shard.name === MAIN_SHARD) return SUBSCRIPTIONS_TABLE;
  return (await cachedSubscriptions(env)).snapshot;
}

/**
 * Drops this isolate's copy, so the next read is fresh: called by every write of a
 * subscription, and by an outbox told of a change.
 */
export function forgetSubscriptions(): void {
  copy = undefined;
}

async function readDirectory(db: D1Database): Promise<SubscriptionDirectory> {
  const records = await listSubscriptions(db);
  return {
    byId: new Map(records.map((record) => [record.id, record])),
    snapshot: snapshotOf(records),
  };
}
