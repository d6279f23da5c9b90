/**
 * The stall watchdog (test/support/stall-watchdog.ts): a real vitest run with a file that never
 * finishes loading ends within seconds and names it, and the limits it applies while a test
 * runs (that test's own timeout plus a grace) and outside one.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReportedHookContext, TestCase, TestModule, TestSpecification } from 'vitest/node';
import { StallWatchdog } from '../support/stall-watchdog.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** A reported file as the watchdog reads one: its id and its path from the root. */
function moduleNamed(file: string): TestModule {
  return { type: 'module', moduleId: join(ROOT, file), relativeModuleId: file } as TestModule;
}

/** A test of `module` with its own timeout, in milliseconds. */
function testOf(module: TestModule, name: string, timeout: number): TestCase {
  return { module, fullName: name, options: { timeout } } as unknown as TestCase;
}

/** A watchdog on a clock the test moves, collecting what it reports. */
function watched(idleMs = 10_000, graceMs = 5_000) {
  let now = 0;
  const reports: string[] = [];
  const watchdog = new StallWatchdog({
    idleMs,
    graceMs,
    now: () => now,
    onStall: (report) => reports.push(report),
  });
  // Its own interval checks too, on the same clock: a check at an unchanged time finds the same.
  watchdog.onTestRunStart([]);
  return {
    watchdog,
    reports,
    advance(ms: number) {
      now += ms;
      watchdog.check();
    },
  };
}

describe('StallWatchdog', () => {
  it('should end a real run whose file never finishes loading, naming the file', () => {
    const started = Date.now();
    const run = spawnSync('vitest', ['run', '--config', 'test/fixtures/stall/vitest.config.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('test watchdog: the run stalled');
    expect(run.stderr).toMatch(
      /hangs-loading\.fixture\.ts: nothing reported for \d+ s, starting its worker/,
    );
    expect(run.stderr).not.toContain('passes.fixture.ts:');
    expect(Date.now() - started).toBeLessThan(45_000);
  });

  it('should allow a running test its own timeout plus the grace, and no more', () => {
    const { watchdog, reports, advance } = watched();
    const module = moduleNamed('test/worker/slow.test.ts');
    watchdog.onTestModuleQueued(module);
    watchdog.onTestCaseReady(testOf(module, 'a long property', 60_000));
    advance(64_000);
    expect(reports).toEqual([]);
    advance(2_000);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain(
      'test/worker/slow.test.ts: nothing reported for 66 s, running "a long property"',
    );
  });

  it('should allow the idle limit outside a test, and name the others in flight', () => {
    const { watchdog, reports, advance } = watched();
    const hung = moduleNamed('test/worker/hung.test.ts');
    const busy = moduleNamed('test/worker/busy.test.ts');
    watchdog.onTestModuleQueued(hung);
    watchdog.onTestModuleQueued(busy);
    watchdog.onTestCaseReady(testOf(busy, 'fine', 600_000));
    advance(10_000);
    expect(reports).toEqual([]);
    advance(1_000);
    expect(reports[0]).toContain(
      'test/worker/hung.test.ts: nothing reported for 11 s, starting its worker',
    );
    expect(reports[0]).toContain('Also in flight:\n  test/worker/busy.test.ts: running "fine"');
  });

  it('should forget a file once it ends, even when its last hook is reported after its end', () => {
    const { watchdog, reports, advance } = watched();
    const module = moduleNamed('test/lib/done.test.ts');
    watchdog.onTestModuleQueued(module);
    watchdog.onTestModuleEnd(module);
    watchdog.onHookEnd({ name: 'afterAll', entity: module } as ReportedHookContext);
    advance(5_000);
    const other = moduleNamed('test/lib/next.test.ts');
    watchdog.onTestModuleQueued(other);
    advance(9_000);
    expect(reports).toEqual([]);
    advance(60_000);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('test/lib/next.test.ts');
    expect(reports[0]).not.toContain('done.test.ts');
  });

  it('should report a run where no file reports anything, naming the files a worker never started', () => {
    const { watchdog, reports, advance } = watched();
    const started = moduleNamed('test/worker/started.test.ts');
    const never = moduleNamed('test/worker/never.test.ts');
    watchdog.onTestRunStart(
      [started, never].map((module) => ({ moduleId: module.moduleId }) as TestSpecification),
    );
    watchdog.onTestModuleQueued(started);
    watchdog.onTestModuleEnd(started);
    advance(10_000);
    expect(reports).toEqual([]);
    advance(1_000);
    expect(reports[0]).toContain(
      `no file reported anything for 11 s; 1 not started (a worker that never started?): ${never.moduleId}`,
    );
  });
});
