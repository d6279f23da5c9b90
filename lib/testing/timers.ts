// Real-time timers behind the timing faults and webhook retries: one registry per sandbox,
// so a reset forgets the old state's pending work, `idle()` can wait for it and `close()`
// stops everything.

/**
 * What a timer belongs to, which decides who may cancel it and who waits for it:
 * - `state`: work on the current state (a deferred commit, the end of a read lag, a
 *   `final_after` settlement). Cancelled by a reset; `idle()` waits for it.
 * - `request`: a request held by the `delay` fault. A reset leaves it (the request is on
 *   the wire, not in the state); `idle()` waits for it; it keeps a process alive, as an
 *   outgoing request would.
 * - `retry`: a webhook's next delivery attempt. Cancelled by a reset; `idle()` does not
 *   wait for it (the default schedule runs for hours).
 */
type TimerScope = 'state' | 'request' | 'retry';

/** The registry of one sandbox's timers. */
export interface Timers {
  /**
   * Runs `run` after `ms` real milliseconds, unless cancelled first.
   *
   * @param ms - delay in real milliseconds.
   * @param scope - see {@link TimerScope}.
   * @param run - the work; a rejection is logged, never thrown.
   */
  after(ms: number, scope: TimerScope, run: () => void | Promise<void>): void;
  /** Resolves after `ms` real milliseconds (scope `request`); resolves at once on `close()`. */
  sleep(ms: number): Promise<void>;
  /** How many `state` and `request` timers are pending or running. */
  pending(): number;
  /**
   * Resolves once no `state` or `request` timer is pending or running, including those
   * the finished ones started. Bounded: gives up after 10,000 rounds.
   */
  idle(): Promise<void>;
  /** Cancels the `state` and `retry` timers (a reset). */
  clearState(): void;
  /** Cancels every timer; held requests resume at once. */
  close(): void;
}

interface Entry {
  scope: TimerScope;
  handle: ReturnType<typeof setTimeout>;
  /** Settles when the work has run or the timer was cancelled. */
  done: Promise<void>;
  finish: () => void;
  /** Runs instead of the work when the timer is cancelled by `close()`. */
  onClose?: () => void;
}

const MAX_IDLE_ROUNDS = 10_000;

/** Creates an empty registry. */
export function createTimers(): Timers {
  const entries = new Set<Entry>();

  function start(ms: number, scope: TimerScope, run: () => void | Promise<void>): Entry {
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const entry = { scope, done, finish } as Entry;
    entry.handle = setTimeout(() => {
      Promise.resolve()
        .then(run)
        .catch((error: unknown) => console.error('sandbox: timed work failed', error))
        .finally(() => {
          entries.delete(entry);
          entry.finish();
        });
    }, ms);
    // Pending faults and retries never keep a process alive; a held request does.
    if (scope !== 'request') setRef(entry.handle, false);
    entries.add(entry);
    return entry;
  }

  function cancel(entry: Entry): void {
    clearTimeout(entry.handle);
    entries.delete(entry);
    entry.onClose?.();
    entry.finish();
  }

  const waited = () => [...entries].filter((entry) => entry.scope !== 'retry');

  return {
    after(ms, scope, run) {
      start(ms, scope, run);
    },
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const entry = start(ms, 'request', resolve);
        entry.onClose = resolve;
      });
    },
    pending: () => waited().length,
    async idle() {
      for (let round = 0; round < MAX_IDLE_ROUNDS; round++) {
        const open = waited();
        if (open.length === 0) return;
        // Someone waits for them now: let them hold the process until they have run.
        for (const entry of open) setRef(entry.handle, true);
        await Promise.all(open.map((entry) => entry.done));
      }
    },
    clearState() {
      for (const entry of [...entries]) if (entry.scope !== 'request') cancel(entry);
    },
    close() {
      for (const entry of [...entries]) cancel(entry);
    },
  };
}

/** `ref`/`unref` where the runtime has them (Node, Bun; Deno through `Deno.refTimer`). */
function setRef(handle: ReturnType<typeof setTimeout>, ref: boolean): void {
  if (typeof handle === 'object' && handle !== null) {
    const timer = handle as { ref?: () => void; unref?: () => void };
    if (ref) timer.ref?.();
    else timer.unref?.();
    return;
  }
  const deno = (
    globalThis as { Deno?: { refTimer?(id: unknown): void; unrefTimer?(id: unknown): void } }
  ).Deno;
  if (ref) deno?.refTimer?.(handle);
  else deno?.unrefTimer?.(handle);
}
