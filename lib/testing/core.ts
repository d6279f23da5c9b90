// The sandbox's engine room: options, state, the two clocks, ids, jobs, webhooks and timers.
import type { ResolvedSandboxOptions } from './options.ts';
import { takeFinalAfter } from './record-faults.ts';
import { settleDue } from './settlement.ts';
import { createState, type JobKind, type SandboxState } from './state.ts';
import { createTimers, type Timers } from './timers.ts';
import {
  deliverWebhook,
  type WebhookEvent,
  type WebhookRecord,
  webhookRecord,
} from './webhooks.ts';

/** What every handler and settlement step works with. */
export interface SandboxCore {
  readonly options: ResolvedSandboxOptions;
  /** Replaced wholesale by `reset()`. */
  state: SandboxState;
  /** Real-time timers of the timing faults and webhook retries (timers.ts). */
  readonly timers: Timers;
  /**
   * `METHOD /path/:param` of the API request being processed, while its (synchronous)
   * handler runs: record faults limited to a route attach by it.
   */
  currentRoute: string | undefined;
  /**
   * Sandbox clock: real clock plus the advanced offset, epoch ms. Business time only;
   * signature freshness always uses the real clock.
   */
  now(): number;
  /** Today's date in sandbox time, UTC, `YYYY-MM-DD`. */
  today(): string;
  /** A new unique id `prefix_…` (a counter plus random characters). */
  nextId(prefix: string): string;
  /**
   * Schedules `kind` work on record `key` at sandbox time `dueAt` (ms). A settlement held
   * by a `final_after` fault runs on its real-time timer instead.
   */
  schedule(dueAt: number, kind: JobKind, key: string): void;
  /**
   * Logs a webhook and queues its delivery; a failed delivery is retried on the state's
   * retry schedule. Never throws, never waits.
   */
  emit(event: WebhookEvent): void;
  /** Resolves when every queued webhook delivery attempt has finished (not future retries). */
  flush(): Promise<void>;
  /**
   * Empties all state, the clock offset, faults and rules, the webhook log (and its
   * retries), the request log; cancels pending deferred commits and read lags.
   */
  reset(): void;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Creates the core of one sandbox.
 *
 * @param options - resolved options (see options.ts).
 */
export function createCore(options: ResolvedSandboxOptions): SandboxCore {
  let deliveries: Promise<void> = Promise.resolve();
  const timers = createTimers();

  // Deliveries go out one after another, in event order, off the request's path.
  const enqueue = (state: SandboxState, record: WebhookRecord): void => {
    deliveries = deliveries.then(() => attempt(state, record));
  };

  const attempt = async (state: SandboxState, record: WebhookRecord): Promise<void> => {
    await deliverWebhook(options, record);
    // A reset while the attempt was out forgets the webhook; so does a spent schedule.
    const delay = state.webhookRetryDelaysMs[record.attempts - 1];
    if (record.delivery !== 'failed' || core.state !== state || delay === undefined) return;
    record.delivery = 'pending';
    record.next_attempt_at = new Date(options.now() + delay).toISOString();
    timers.after(delay, 'retry', () => enqueue(state, record));
  };

  const core: SandboxCore = {
    options,
    state: createState(options.openingBalanceMinor),
    timers,
    currentRoute: undefined,
    now: () => options.now() + core.state.clockOffsetMs,
    today: () => new Date(core.now()).toISOString().slice(0, 10),
    nextId(prefix) {
      core.state.seq += 1;
      let suffix = '';
      for (let i = 0; i < 8; i++) {
        suffix += ID_ALPHABET[Math.floor(options.random() * ID_ALPHABET.length)] ?? 'x';
      }
      return `${prefix}_${core.state.seq.toString(36).padStart(4, '0')}${suffix}`;
    },
    schedule(dueAt, kind, key) {
      const heldMs = takeFinalAfter(core, kind, key);
      if (heldMs !== undefined) {
        // Due "now" in sandbox time when the real timer fires, and run at once.
        timers.after(heldMs, 'state', () => {
          core.schedule(core.now(), kind, key);
          settleDue(core);
        });
        return;
      }
      core.state.seq += 1;
      const job = { dueAt, seq: core.state.seq, kind, key };
      const jobs = core.state.jobs;
      let index = jobs.length;
      while (index > 0 && (jobs[index - 1]?.dueAt ?? 0) > dueAt) index--;
      jobs.splice(index, 0, job);
    },
    emit(event) {
      const record = webhookRecord(event, event.url ?? options.webhookUrl);
      core.state.webhooks.push(record);
      if (record.url === null) return;
      enqueue(core.state, record);
    },
    async flush() {
      let pending: Promise<void>;
      do {
        pending = deliveries;
        await pending;
      } while (pending !== deliveries);
    },
    reset() {
      timers.clearState();
      core.state = createState(options.openingBalanceMinor);
    },
  };
  return core;
}
