import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { fuzzRuns, PROJECTS, type ProjectFiles } from './test/projects.ts';
import { LongestFirst } from './test/support/longest-first.ts';
import { StallWatchdog } from './test/support/stall-watchdog.ts';
import { workerTestOptions } from './test/support/worker-test-options.ts';

// The projects of test/projects.ts (which files each holds; the tiers there pick which run):
// the SDK and sandbox under Node (lib), the Node tests that drive other runtimes and tools
// (tools), the packed package as consumers install it (package), the stack over HTTP (e2e),
// the gateway inside workerd (worker). test/global-setup.ts starts the sandbox emulators and
// the delivery receiver on loopback ports and provides their URLs.
// Every wait is bounded: a test, a hook and a teardown by their timeouts, the rest of a file's
// life (a worker that never starts, a lost message) by the stall watchdog, which ends the run
// and names the file.
// Projects that run as many files at once share a group; groups run in the order of
// their counts, most first (vitest needs one count per group).
const counts = [...new Set(Object.values(PROJECTS).map((project): number => project.workers))].sort(
  (a, b) => b - a,
);
const files = (name: keyof typeof PROJECTS) => {
  const project: ProjectFiles = PROJECTS[name];
  return {
    include: [...project.include],
    exclude: [...(project.exclude ?? [])],
    maxWorkers: project.workers,
    sequence: { groupOrder: counts.indexOf(project.workers) },
  };
};

export default defineConfig({
  test: {
    reporters: ['default', new StallWatchdog()],
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'lib',
          ...files('lib'),
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'tools',
          ...files('tools'),
          environment: 'node',
        },
      },
      {
        test: {
          name: 'package',
          ...files('package'),
          environment: 'node',
          // Packs the package once (or takes the tarball the runner packed) and installs it
          // into a fresh consumer project.
          globalSetup: ['test/package/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          ...files('e2e'),
          environment: 'node',
          testTimeout: 90_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) =>
            workerTestOptions(inject('sandboxUrl'), {
              // Cases per property of the fuzz tests (the fuzz-*.test.ts files under
              // test/worker): the tier's count, `FUZZ_RUNS` when set.
              FUZZ_RUNS: String(fuzzRuns()),
            }),
          ),
        ],
        test: {
          name: 'worker',
          ...files('worker'),
          globalSetup: ['test/global-setup.ts'],
          // One workerd runs many files, each from fresh storage (test/worker/fresh-storage.ts).
          isolate: false,
          // The workerd lives on after a file: queue batches and alarms its last tests left may
          // still log. Straight to stdout, so such a line never waits on a closed vitest channel.
          disableConsoleIntercept: true,
          setupFiles: ['test/worker/fresh-storage.ts'],
        },
      },
    ],
  },
});
