/**
 * The shards of one sweeper run and what failed in them: each step runs on every shard still
 * in the run at once, and a shard whose statement fails is left out of the rest of the run
 * (logged), so one database that is down does not keep the others from being swept. The run
 * fails at its end, and the next one sweeps that shard again.
 */
import type { EventShard } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';

/** A sweeper run's shards: those still in it, and the errors of those left out. */
export class ShardSweep {
  #live: readonly EventShard[];
  readonly #failed = new Map<string, unknown>();

  /** @param shards - the shards the run visits, each once. */
  constructor(shards: readonly EventShard[]) {
    this.#live = shards;
  }

  /**
   * Runs `work` on every shard still in the run, in parallel; a shard whose work throws is
   * logged (`relay_sweep_shard_failed`) and left out of the later steps.
   *
   * @param step - the step's name, for the log.
   * @param work - the step on one shard.
   * @returns what the shards that did not fail returned, in the run's order.
   */
  async each<T>(step: string, work: (shard: EventShard) => Promise<T>): Promise<T[]> {
    const settled = await Promise.allSettled(this.#live.map(work));
    const done: T[] = [];
    for (const [index, outcome] of settled.entries()) {
      const shard = this.#live[index] as EventShard;
      if (outcome.status === 'fulfilled') {
        done.push(outcome.value);
        continue;
      }
      this.#failed.set(shard.name, outcome.reason);
      logEvent('error', 'relay_sweep_shard_failed', {
        shard: shard.name,
        step,
        error_message:
          outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason),
      });
    }
    this.#live = this.#live.filter((shard) => !this.#failed.has(shard.name));
    return done;
  }

  /** Whether a statement on the shard bound as `name` failed in this run. */
  failed(name: string): boolean {
    return this.#failed.has(name);
  }

  /**
   * Throws the first failure of the run, as it was thrown, when there was one.
   *
   * @throws whatever the first failing shard's statement threw.
   */
  throwIfFailed(): void {
    for (const error of this.#failed.values()) throw error;
  }
}
