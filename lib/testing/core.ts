// The sandbox's engine room: options, state, the two clocks, ids, jobs and webhooks.
import type { ResolvedSandboxOptions } from './options.ts';
import { createState, type JobKind, type SandboxState } from './state.ts';
import { deliverWebhook, type WebhookEvent, webhookRecord } from './webhooks.ts';

/** What every handler and settlement step works with. */
export interface SandboxCore {
  readonly options: ResolvedSandboxOptions;
  /** Replaced wholesale by `reset()`. */
  state: SandboxState;
  /**
   * Sandbox clock: real clock plus the advanced offset, epoch ms. Business time only;
   * signature freshness always uses the real clock.
   */
  now(): number;
  /** Today's date in sandbox time, UTC, `YYYY-MM-DD`. */
  today(): string;
  /** A new unique id `prefix_…` (a counter plus random characters). */
  nextId(prefix: string): string;
  /** Schedules `kind` work on record `key` at sandbox time `dueAt` (ms). */
  schedule(dueAt: number, kind: JobKind, key: string): void;
  /** Logs a webhook and queues its delivery; never throws, never waits. */
  emit(event: WebhookEvent): void;
  /** Resolves when every queued webhook delivery has finished. */
  flush(): Promise<void>;
  /** Empties all state, the clock offset, faults, the webhook log and the request log. */
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
  const core: SandboxCore = {
    options,
    state: createState(options.openingBalanceMinor),
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
      // Deliveries go out one after another, in event order, off the request's path.
      deliveries = deliveries.then(() => deliverWebhook(options, record));
    },
    async flush() {
      let pending: Promise<void>;
      do {
        pending = deliveries;
        await pending;
      } while (pending !== deliveries);
    },
    reset() {
      core.state = createState(options.openingBalanceMinor);
    },
  };
  return core;
}
