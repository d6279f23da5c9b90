// The cron triggers of wrangler.toml, run against `wrangler dev` by `npm start`.
// `wrangler dev` never fires them by itself, so without this the local gateway would never
// purge idempotency keys nor sweep the relay: a delivery whose queue message was lost (a
// restart of `wrangler dev` empties its in-memory queue) would stay `pending` for ever,
// where production's sweeper re-enqueues it. Each run calls the scheduled handler through
// the trigger endpoint wrangler dev serves (no `--test-scheduled` needed), with the cron
// expression and the scheduled time, as Cloudflare would.
import { unstable_readConfig } from 'wrangler';
import { type CronSchedule, parseCron } from './cron-schedule.ts';

/**
 * The endpoint of `wrangler dev` that runs the Worker's `scheduled` handler, with
 * `cron` and `time` (epoch ms) in its query; it answers 200 `ok`, or 500 when the
 * handler threw. (`/cdn-cgi/handler/scheduled` is the older name of the same endpoint.)
 */
export const SCHEDULED_PATH = '/cdn-cgi/local/scheduled';

/** The longest single timer wait, in milliseconds: timers past ~24.8 days overflow. */
const MAX_WAIT_MS = 3_600_000;

/**
 * The cron expressions of a wrangler configuration's `[triggers] crons`, read by
 * wrangler's own configuration reader (so they are what `wrangler deploy` would ship).
 *
 * @param configPath - the wrangler configuration, e.g. `wrangler.toml`.
 * @returns the expressions, possibly none.
 * @throws whatever wrangler throws for an unreadable configuration.
 */
export function readCrons(configPath: string): string[] {
  return [...(unstable_readConfig({ config: configPath }, {}).triggers?.crons ?? [])];
}

/**
 * Runs the gateway's scheduled handler once.
 *
 * @param gatewayUrl - `http://127.0.0.1:<port>` of `wrangler dev`.
 * @param cron - the expression passed as `controller.cron`.
 * @param time - `controller.scheduledTime`, epoch milliseconds.
 * @throws {Error} naming the status and body when the handler failed (not 200), or the
 *   network error when `wrangler dev` did not answer.
 */
export async function runScheduled(gatewayUrl: string, cron: string, time: number): Promise<void> {
  const query = new URLSearchParams({ cron, time: String(time) });
  const response = await fetch(`${gatewayUrl}${SCHEDULED_PATH}?${query}`);
  const body = (await response.text()).trim().slice(0, 200);
  if (response.status !== 200) throw new Error(`HTTP ${response.status} ${body}`);
}

/** Options of {@link startLocalCron}. */
export interface LocalCronOptions {
  /** `http://127.0.0.1:<port>` of `wrangler dev`. */
  readonly gatewayUrl: string;
  /** The cron expressions (`[triggers] crons`). */
  readonly crons: readonly string[];
  /**
   * Run every cron this often instead of on its schedule, in milliseconds, with the real
   * time as the scheduled time (for tests, which cannot wait for a quarter hour).
   * @default undefined (on the schedule)
   */
  readonly intervalMs?: number | undefined;
  /** Where a line about each run goes. @default console.log */
  readonly log?: (line: string) => void;
  /** Where a failed run, or a cron that cannot run, is reported. @default console.error */
  readonly error?: (line: string) => void;
}

/** A running local cron. */
export interface LocalCron {
  /** The expressions that run (those {@link parseCron} read). */
  readonly running: readonly string[];
  /** Stops every timer; a run in progress finishes on its own. */
  stop(): void;
}

/**
 * Fires each cron on its schedule (UTC), calling {@link runScheduled} with the time the
 * schedule named. Runs of one cron never overlap: a run still going when the next is due
 * is reported and that run skipped. Each run is logged; a failure is reported on `error`
 * and the schedule goes on. An expression the local cron cannot read is reported and left
 * out (the others still run).
 *
 * @param options - the gateway, the expressions, the optional test interval, the outputs.
 * @returns the running cron; its timers never keep the process alive.
 */
export function startLocalCron(options: LocalCronOptions): LocalCron {
  const log = options.log ?? console.log;
  const error = options.error ?? console.error;
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const schedules: CronSchedule[] = [];
  for (const expression of options.crons) {
    try {
      schedules.push(parseCron(expression));
    } catch (problem) {
      error(`cron: ${(problem as Error).message}; it does not run locally`);
    }
  }

  const wait = (ms: number, then: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) then();
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  const tick = async (schedule: CronSchedule, time: number, busy: { now: boolean }) => {
    const at = new Date(time).toISOString();
    if (busy.now) {
      error(`cron "${schedule.expression}" at ${at} skipped: the previous run is still going`);
      return;
    }
    busy.now = true;
    try {
      await runScheduled(options.gatewayUrl, schedule.expression, time);
      log(`cron "${schedule.expression}" ran (scheduled time ${at})`);
    } catch (problem) {
      error(`cron "${schedule.expression}" at ${at} failed: ${(problem as Error).message}`);
    } finally {
      busy.now = false;
    }
  };

  const follow = (schedule: CronSchedule, busy: { now: boolean }, after: number) => {
    let due: number;
    try {
      due = schedule.next(after);
    } catch (problem) {
      error(`cron: ${(problem as Error).message}; it stops running locally`);
      return;
    }
    const sleep = () => {
      const left = due - Date.now();
      if (left > 0) return wait(Math.min(left, MAX_WAIT_MS), sleep);
      void tick(schedule, due, busy);
      follow(schedule, busy, due);
    };
    sleep();
  };

  for (const schedule of schedules) {
    const busy = { now: false };
    const every = options.intervalMs;
    if (every === undefined) follow(schedule, busy, Date.now());
    else {
      const again = () => {
        void tick(schedule, Date.now(), busy);
        wait(every, again);
      };
      wait(every, again);
    }
  }
  return {
    running: schedules.map((schedule) => schedule.expression),
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
