/**
 * A vitest reporter that ends a run which stops making progress, naming the files that hung.
 *
 * vitest bounds a test and a hook by their timeouts, but nothing bounds the rest of a file's
 * life: starting its pool worker (for the worker project, a whole workerd), loading its
 * modules, or a lost message between vitest and the worker. A file stuck there leaves the
 * run idle forever. This reporter watches every file in flight: one that reports nothing
 * (no test starting or ending, no hook) for longer than its running test's own timeout plus
 * {@link STALL_GRACE_MS}, or {@link STALL_IDLE_MS} outside a test, is declared stalled. The
 * reporter prints the file, what it was doing and for how long, and exits the run with
 * status 1 so a hang fails in minutes with a name instead of never ending.
 */
import type {
  ReportedHookContext,
  Reporter,
  TestCase,
  TestModule,
  TestSpecification,
} from 'vitest/node';

/** Longest quiet time outside a test (starting a worker, importing, a hook), in milliseconds. */
const STALL_IDLE_MS = 180_000;
/** Added to a running test's own timeout before it counts as stalled, in milliseconds. */
const STALL_GRACE_MS = 60_000;
/** How often the files in flight are looked at, in milliseconds. */
const CHECK_EVERY_MS = 5_000;

/** The file a hook runs in (a file's own hooks, or a suite's or test's). */
function fileOf(hook: ReportedHookContext): TestModule {
  return hook.entity.type === 'module' ? hook.entity : hook.entity.module;
}

/** A file in flight: what it last reported and when. */
interface InFlight {
  readonly file: string;
  lastSignalAt: number;
  doing: string;
  /** The running test's timeout, in milliseconds; `undefined` outside a test. */
  testTimeoutMs: number | undefined;
}

/** The options of {@link StallWatchdog}; the defaults suit a run, tests shorten them. */
export interface StallWatchdogOptions {
  readonly idleMs?: number;
  readonly graceMs?: number;
  /** Called with the report instead of printing it and exiting (for the watchdog's own test). */
  readonly onStall?: (report: string) => void;
  readonly now?: () => number;
}

/**
 * The reporter. Register it beside the default one in `reporters`.
 *
 * @example
 * ```ts
 * reporters: ['default', new StallWatchdog()]
 * ```
 */
export class StallWatchdog implements Reporter {
  readonly #inFlight = new Map<string, InFlight>();
  readonly #idleMs: number;
  readonly #graceMs: number;
  readonly #onStall: (report: string) => void;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** When any file last reported anything: a worker that never starts reports nothing at all. */
  #lastSignalAt = 0;
  /** Files of the run that have not reported yet: a worker that never starts leaves its file here. */
  readonly #notStarted = new Set<string>();
  /** Files that ended: a hook's end can be reported after its file's, and must not revive it. */
  readonly #ended = new Set<string>();

  constructor(options: StallWatchdogOptions = {}) {
    this.#idleMs = options.idleMs ?? STALL_IDLE_MS;
    this.#graceMs = options.graceMs ?? STALL_GRACE_MS;
    this.#now = options.now ?? Date.now;
    this.#onStall =
      options.onStall ??
      ((report) => {
        process.stderr.write(`\n${report}\n`);
        process.exit(1);
      });
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    for (const specification of specifications) this.#notStarted.add(specification.moduleId);
    this.#lastSignalAt = this.#now();
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.#timer.unref();
  }

  onTestRunEnd(): void {
    clearInterval(this.#timer);
    this.#inFlight.clear();
    this.#notStarted.clear();
    this.#ended.clear();
  }

  onTestModuleQueued(module: TestModule): void {
    this.#signal(module, 'starting its worker and loading the file', undefined);
  }

  onTestModuleCollected(module: TestModule): void {
    this.#signal(module, 'collected, before its first test', undefined);
  }

  onTestCaseReady(test: TestCase): void {
    this.#signal(test.module, `running "${test.fullName}"`, test.options.timeout);
  }

  onTestCaseResult(test: TestCase): void {
    this.#signal(test.module, `after "${test.fullName}"`, undefined);
  }

  onHookStart(hook: ReportedHookContext): void {
    this.#signal(fileOf(hook), `in a ${hook.name} hook`, undefined);
  }

  onHookEnd(hook: ReportedHookContext): void {
    this.#signal(fileOf(hook), `after a ${hook.name} hook`, undefined);
  }

  onTestModuleEnd(module: TestModule): void {
    this.#lastSignalAt = this.#now();
    this.#ended.add(module.moduleId);
    this.#inFlight.delete(module.moduleId);
  }

  /** Looks at every file in flight once; the interval calls it, tests call it directly. */
  check(): void {
    const now = this.#now();
    const stalled = [...this.#inFlight.values()].filter((entry) => {
      const allowed =
        entry.testTimeoutMs === undefined ? this.#idleMs : entry.testTimeoutMs + this.#graceMs;
      return now - entry.lastSignalAt > allowed;
    });
    const testRunning = [...this.#inFlight.values()].some(
      (entry) => entry.testTimeoutMs !== undefined,
    );
    const quiet = now - this.#lastSignalAt;
    if (stalled.length === 0 && (testRunning || quiet <= this.#idleMs)) return;
    clearInterval(this.#timer);
    const lines = stalled.map(
      (entry) =>
        `  ${entry.file}: nothing reported for ${Math.round((now - entry.lastSignalAt) / 1000)} s, ${entry.doing}`,
    );
    const others = [...this.#inFlight.values()].filter((entry) => !stalled.includes(entry));
    const running = others.map((entry) => `  ${entry.file}: ${entry.doing}`);
    this.#onStall(
      [
        'test watchdog: the run stalled, stopping it.',
        ...(stalled.length > 0
          ? lines
          : [
              `  no file reported anything for ${Math.round(quiet / 1000)} s; ${this.#notStarted.size} not started` +
                ` (a worker that never started?): ${[...this.#notStarted].slice(0, 5).join(', ')}`,
            ]),
        ...(running.length > 0 ? ['Also in flight:', ...running] : []),
      ].join('\n'),
    );
  }

  #signal(module: TestModule, doing: string, testTimeoutMs: number | undefined): void {
    this.#lastSignalAt = this.#now();
    if (this.#ended.has(module.moduleId)) return;
    this.#notStarted.delete(module.moduleId);
    this.#inFlight.set(module.moduleId, {
      file: module.relativeModuleId,
      lastSignalAt: this.#now(),
      doing,
      testTimeoutMs,
    });
  }
}
