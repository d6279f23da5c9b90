/**
 * The recent success rate of one subscription, counted by its outbox per UTC hour: in memory
 * as attempts settle, written once per run (docs/assumptions.md, "Webhook relay: subscriber
 * health and delivery limits").
 */

/** Milliseconds in an hour: the width of a count. */
const HOUR_MS = 3_600_000;

/**
 * Hours of attempt counts behind the recent success rate: the current UTC hour and the 23
 * before it, so about the last day.
 */
export const SUCCESS_RATE_WINDOW_HOURS = 24;

/** The storage key of the stored counts. */
const COUNTS_KEY = 'attempt_hours';

/** Attempts of one subscription over the success-rate window. */
export interface AttemptCounts {
  readonly succeeded: number;
  readonly failed: number;
}

/** Counts by UTC hour number (`Math.floor(ms / HOUR_MS)`), as stored. */
type HourCounts = Record<string, AttemptCounts>;

/**
 * An outbox's attempt counts: {@link AttemptTally.count} as each attempt is recorded,
 * {@link AttemptTally.save} at the end of a run, {@link AttemptTally.recent} for the admin API.
 */
export class AttemptTally {
  readonly #kv: SyncKvStorage;
  /** Counted since the last save, by hour. */
  #unsaved: HourCounts = {};

  /** @param kv - the outbox's synchronous key-value storage. */
  constructor(kv: SyncKvStorage) {
    this.#kv = kv;
  }

  /**
   * Counts one attempt in the hour it settled.
   *
   * @param succeeded - whether the subscriber answered 2xx.
   * @param at - when it settled, epoch milliseconds.
   */
  count(succeeded: boolean, at: number): void {
    this.#unsaved = add(this.#unsaved, Math.floor(at / HOUR_MS), succeeded ? [1, 0] : [0, 1]);
  }

  /**
   * The attempts over the window ending in the hour of `now`, stored and unsaved.
   *
   * @param now - the current time, epoch milliseconds.
   */
  recent(now: number): AttemptCounts {
    const first = Math.floor(now / HOUR_MS) - (SUCCESS_RATE_WINDOW_HOURS - 1);
    let succeeded = 0;
    let failed = 0;
    for (const [hour, counts] of Object.entries(this.#merged())) {
      if (Number(hour) < first) continue;
      succeeded += counts.succeeded;
      failed += counts.failed;
    }
    return { succeeded, failed };
  }

  /**
   * Writes what was counted since the last save (one row), dropping the hours past the
   * window; nothing when nothing was counted.
   *
   * @param now - the current time, epoch milliseconds.
   */
  save(now: number): void {
    if (Object.keys(this.#unsaved).length === 0) return;
    const first = Math.floor(now / HOUR_MS) - (SUCCESS_RATE_WINDOW_HOURS - 1);
    const kept = Object.entries(this.#merged()).filter(([hour]) => Number(hour) >= first);
    this.#kv.put(COUNTS_KEY, Object.fromEntries(kept));
    this.#unsaved = {};
  }

  #merged(): HourCounts {
    let merged: HourCounts = { ...(this.#kv.get<HourCounts>(COUNTS_KEY) ?? {}) };
    for (const [hour, counts] of Object.entries(this.#unsaved)) {
      merged = add(merged, Number(hour), [counts.succeeded, counts.failed]);
    }
    return merged;
  }
}

function add(counts: HourCounts, hour: number, [succeeded, failed]: [number, number]): HourCounts {
  const before = counts[hour] ?? { succeeded: 0, failed: 0 };
  return {
    ...counts,
    [hour]: { succeeded: before.succeeded + succeeded, failed: before.failed + failed },
  };
}
