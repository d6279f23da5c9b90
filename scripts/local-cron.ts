// The cron triggers of wrangler.toml, run against `wrangler dev` by `npm start`.
// `wrangler dev` never fires them by itself, so without this the local gateway would never
// purge idempotency keys nor sweep the relay: a delivery whose queue message was lost (a
// restart of `wrangler dev` empties its in-memory queue) would stay `pending` for ever,
// where production's sweeper re-enqueues it. Each run calls the scheduled handler through
// the trigger endpoint wrangler dev serves (no `--test-scheduled` needed), with the cron
// expression and the scheduled time, as Cloudflare would.
//
// Reading and timing the expressions is croner's work (a scheduler is not what this
// project is about). It reads them in Cloudflare's dialect ({@link CLOUDFLARE_CRON}):
// five fields in UTC, and the day of week numbered 1-7 from Sunday (or SUN-SAT), so that
// `0 17 * * 1` runs on Sunday here as on Cloudflare, where standard cron would mean Monday;
// 0 is refused. `L`, `W` and `#` work as Cloudflare documents them. croner also takes a few
// spellings Cloudflare does not document (`?`, `@hourly`, 8 for Sunday): `wrangler deploy`
// judges those. croner hands a run only the moment it fired, a few milliseconds after the
// time the expression named, so the scheduled time sent is the latest time the expression
// names at or before that moment (Cloudflare sends the named time, not the start time).
import { Cron, type CronOptions } from 'croner';
import { unstable_readConfig } from 'wrangler';

/**
 * The endpoint of `wrangler dev` that runs the Worker's `scheduled` handler, with
 * `cron` and `time` (epoch ms) in its query; it answers 200 `ok`, or 500 when the
 * handler threw. (`/cdn-cgi/handler/scheduled` is the older name of the same endpoint.)
 */
export const SCHEDULED_PATH = '/cdn-cgi/local/scheduled';

/**
 * How croner reads a cron trigger: Cloudflare's dialect (five fields, UTC, day of week
 * 1-7 from Sunday or SUN-SAT), as the header of this file explains. Pass a copy
 * (`{ ...CLOUDFLARE_CRON }`): croner writes its defaults into the options it is given.
 */
export const CLOUDFLARE_CRON: Readonly<CronOptions> = {
  mode: '5-part',
  timezone: 'UTC',
  alternativeWeekdays: true,
};

/** The test timing of {@link LocalCronOptions.intervalMs}: every second, in UTC. */
const EVERY_SECOND = '* * * * * *';
const TEST_TIMING: Readonly<CronOptions> = { mode: '6-part', timezone: 'UTC' };

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

/**
 * The time a schedule named for a run that fired at `firedAt`: the latest time it names
 * at or before that moment (a run fires a few milliseconds late, or later after a sleep).
 *
 * @param schedule - the expression read by croner, without croner's `interval` option
 *   (which would move the response back by that interval).
 * @param firedAt - when the run started, epoch milliseconds.
 * @returns epoch milliseconds; `firedAt` itself when the schedule names no earlier time.
 */
export function scheduledTime(schedule: Cron, firedAt: number): number {
  // croner looks strictly before the reference, so one millisecond later keeps `firedAt`.
  return schedule.previousRuns(1, new Date(firedAt + 1))[0]?.getTime() ?? firedAt;
}

/** Options of {@link startLocalCron}. */
export interface LocalCronOptions {
  /** `http://127.0.0.1:<port>` of `wrangler dev`. */
  readonly gatewayUrl: string;
  /** The cron expressions (`[triggers] crons`). */
  readonly crons: readonly string[];
  /**
   * Run every cron this often instead of on its schedule, in milliseconds, rounded up to
   * whole seconds (croner's finest step), with the whole second of each run as its
   * scheduled time (for tests, which cannot wait for a quarter hour).
   * @default undefined (on the schedule)
   */
  readonly intervalMs?: number | undefined;
  /** Where a line about each run goes. @default console.log */
  readonly log?: (line: string) => void;
  /** Where a failed or skipped run, or a cron that cannot run, is reported. @default console.error */
  readonly error?: (line: string) => void;
}

/** A running local cron. */
export interface LocalCron {
  /** The expressions that run (those croner read in {@link CLOUDFLARE_CRON}'s dialect). */
  readonly running: readonly string[];
  /** Stops every timer; a run in progress finishes on its own. */
  stop(): void;
}

/**
 * Fires each cron on its schedule (UTC, in Cloudflare's dialect), calling
 * {@link runScheduled} with the time the schedule named. Runs of one cron never overlap:
 * a run still going when the next is due is reported and that run skipped. Each run is
 * logged; a failure is reported on `error` and the schedule goes on. An expression croner
 * cannot read, or one that never fires, is reported and left out (the others still run).
 *
 * @param options - the gateway, the expressions, the optional test interval, the outputs.
 * @returns the running cron; its timers never keep the process alive.
 *
 * @example
 * ```ts
 * const cron = startLocalCron({ gatewayUrl: 'http://127.0.0.1:8787', crons: ['*\/15 * * * *'] });
 * cron.stop();
 * ```
 */
export function startLocalCron(options: LocalCronOptions): LocalCron {
  const log = options.log ?? console.log;
  const error = options.error ?? console.error;
  const every = options.intervalMs;
  const jobs: Cron[] = [];
  const running: string[] = [];
  const at = (time: number) => new Date(time).toISOString();

  for (const expression of options.crons) {
    let schedule: Cron;
    try {
      schedule = new Cron(expression, { ...CLOUDFLARE_CRON });
    } catch (problem) {
      error(
        `cron: cron "${expression}": ${(problem as Error).message} (read as Cloudflare does: ` +
          '5 fields in UTC, day of week 1-7 from Sunday or SUN-SAT); it does not run locally',
      );
      continue;
    }
    if (schedule.nextRun() === null) {
      error(`cron: cron "${expression}": it never fires; it does not run locally`);
      continue;
    }
    // Tests swap the schedule for every second, `interval` seconds apart: the same
    // overlap rule, reports and scheduled times as on the real schedule.
    const named = every === undefined ? schedule : new Cron(EVERY_SECOND, { ...TEST_TIMING });
    const timing: CronOptions =
      every === undefined
        ? CLOUDFLARE_CRON
        : { ...TEST_TIMING, interval: Math.max(1, Math.ceil(every / 1000)) };
    const job = new Cron(
      every === undefined ? expression : EVERY_SECOND,
      {
        ...timing,
        unref: true,
        protect: () =>
          error(
            `cron "${expression}" at ${at(scheduledTime(named, Date.now()))} skipped: ` +
              'the previous run is still going',
          ),
      },
      async (self) => {
        const time = scheduledTime(named, self.currentRun()?.getTime() ?? Date.now());
        try {
          await runScheduled(options.gatewayUrl, expression, time);
          log(`cron "${expression}" ran (scheduled time ${at(time)})`);
        } catch (problem) {
          error(`cron "${expression}" at ${at(time)} failed: ${(problem as Error).message}`);
        }
      },
    );
    jobs.push(job);
    running.push(expression);
  }
  return {
    running,
    stop() {
      for (const job of jobs) job.stop();
    },
  };
}
