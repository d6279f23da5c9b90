/**
 * The subscription as its outbox (worker/relay/subscriber-outbox.ts) knows it: read from D1
 * at most once per `SUBSCRIPTION_CACHE_SEC` seconds, forgotten at once when the admin API
 * tells the outbox of a change (a disable, a new secret, new limits) or when the outbox moves
 * its health, so a delivery attempt reads nothing from `DB`, the store every event shares.
 */
import { loadSettings } from '../config.ts';
import { findSubscription, type SubscriptionRecord } from '../db/subscriptions.ts';
import type { AttemptTally } from './outbox-health.ts';

/** One outbox's copy of its subscription. */
export class SubscriptionCopy {
  readonly #id: string;
  #copy:
    | { readonly readAt: number; readonly record: Promise<SubscriptionRecord | undefined> }
    | undefined;

  /** @param id - the subscription the outbox is for. */
  constructor(id: string) {
    this.#id = id;
  }

  /** The subscription id. */
  get id(): string {
    return this.#id;
  }

  /**
   * The subscription, from the copy while it is younger than `SUBSCRIPTION_CACHE_SEC`, else
   * read from `DB` now (one query, shared by the calls that arrive while it runs).
   *
   * @param env - the `DB` binding and the setting (unreadable settings: read every time).
   * @param now - the current time, epoch milliseconds.
   * @returns the record; `undefined` when the subscription is gone.
   * @throws whatever D1 throws (nothing is kept then).
   */
  current(env: Env, now = Date.now()): Promise<SubscriptionRecord | undefined> {
    const loaded = loadSettings(env);
    const lifetimeMs = loaded.ok ? loaded.settings.subscriptionCacheSec * 1000 : 0;
    const copy = this.#copy;
    if (copy !== undefined && now - copy.readAt < lifetimeMs) return copy.record;
    const record = findSubscription(env.DB, this.#id);
    if (lifetimeMs > 0) {
      const kept = { readAt: now, record };
      this.#copy = kept;
      record.catch(() => {
        if (this.#copy === kept) this.#copy = undefined;
      });
    }
    return record;
  }

  /**
   * The subscription of a delivery this outbox holds: from the copy, or read from `DB` should
   * the delivery name another subscription (never expected: it is how outboxes are chosen).
   *
   * @param env - the `DB` binding and the setting.
   * @param id - the delivery's subscription id.
   * @throws whatever D1 throws.
   */
  find(env: Env, id: string): Promise<SubscriptionRecord | undefined> {
    return id === this.#id ? this.current(env) : findSubscription(env.DB, id);
  }

  /** Drops the copy: the subscription changed, and the next read is fresh. */
  forget(): void {
    this.#copy = undefined;
  }
}

/** What an attempt's steps use of their outbox: its subscription and its attempt counts. */
export interface OutboxState {
  readonly subscription: SubscriptionCopy;
  readonly tally: AttemptTally;
}
