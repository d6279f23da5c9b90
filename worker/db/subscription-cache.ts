/**
 * The subscriptions as the fan-out and the ordered-delivery check read them: one copy per
 * isolate, at most `SUBSCRIPTION_CACHE_SEC` old, so an event stored off `DB` costs `DB` no
 * query (docs/assumptions.md, "Webhook relay: subscriber health and delivery limits").
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

/**
 * A value read from `DB` and reused while younger than `SUBSCRIPTION_CACHE_SEC` (never with
 * 0 or unreadable settings); a read that fails is not kept. Calls that arrive while a read
 * runs share it.
 */
export class TimedCopy<T> {
  readonly #read: (db: D1Database) => Promise<T>;
  #copy: { readonly readAt: number; readonly value: Promise<T> } | undefined;

  /** @param read - reads the value from the `DB` binding. */
  constructor(read: (db: D1Database) => Promise<T>) {
    this.#read = read;
  }

  /**
   * The value, from the copy while it is young enough, else read now.
   *
   * @param env - the `DB` binding and the setting.
   * @param now - the current time, epoch milliseconds.
   * @throws whatever the read throws.
   */
  get(env: Env, now = Date.now()): Promise<T> {
    const loaded = loadSettings(env);
    const lifetimeMs = loaded.ok ? loaded.settings.subscriptionCacheSec * 1000 : 0;
    const copy = this.#copy;
    if (copy !== undefined && now - copy.readAt < lifetimeMs) return copy.value;
    const value = this.#read(env.DB);
    if (lifetimeMs > 0) {
      const kept = { readAt: now, value };
      this.#copy = kept;
      value.catch(() => {
        if (this.#copy === kept) this.#copy = undefined;
      });
    }
    return value;
  }

  /** Drops the copy: the next read is fresh. */
  forget(): void {
    this.#copy = undefined;
  }
}

// One per isolate: every Worker and object of a deployment reads the same `DB`.
const directory = new TimedCopy(readDirectory);

/**
 * Every subscription, from this isolate's copy ({@link TimedCopy}), else read from `DB` now
 * (one query).
 *
 * @param env - the `DB` binding and the setting.
 * @param now - the current time, epoch milliseconds.
 * @throws whatever D1 throws reading them.
 */
export function cachedSubscriptions(env: Env, now = Date.now()): Promise<SubscriptionDirectory> {
  return directory.get(env, now);
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
  directory.forget();
}

async function readDirectory(db: D1Database): Promise<SubscriptionDirectory> {
  const records = await listSubscriptions(db);
  return {
    byId: new Map(records.map((record) => [record.id, record])),
    snapshot: snapshotOf(records),
  };
}
