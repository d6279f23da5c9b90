/**
 * The subscription as its outbox knows it: a copy at most `SUBSCRIPTION_CACHE_SEC` old,
 * dropped when the admin API reports a change or the outbox moves its health.
 */
import { TimedCopy } from '../db/subscription-cache.ts';
import { findSubscription, type SubscriptionRecord } from '../db/subscriptions.ts';
import type { AttemptTally } from './outbox-health.ts';

/** One outbox's copy of its subscription. */
export class SubscriptionCopy {
  readonly #id: string;
  readonly #copy: TimedCopy<SubscriptionRecord | undefined>;

  /** @param id - the subscription the outbox is for. */
  constructor(id: string) {
    this.#id = id;
    this.#copy = new TimedCopy((db) => findSubscription(db, id));
  }

  /** The subscription id. */
  get id(): string {
    return this.#id;
  }

  /**
   * The subscription, from the copy while it is younger than `SUBSCRIPTION_CACHE_SEC`, else
   * read from `DB` now.
   *
   * @param env - the `DB` binding and the setting.
   * @returns the record; `undefined` when the subscription is gone.
   * @throws whatever D1 throws.
   */
  current(env: Env): Promise<SubscriptionRecord | undefined> {
    return this.#copy.get(env);
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
    this.#copy.forget();
  }
}

/** What an attempt's steps use of their outbox: its subscription and its attempt counts. */
export interface OutboxState {
  readonly subscription: SubscriptionCopy;
  readonly tally: AttemptTally;
}
