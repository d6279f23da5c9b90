import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { workerTestOptions } from './test/support/worker-test-options.ts';

// Projects: the SDK and sandbox under Node, the packed package as consumers install it
// (package), the stack over HTTP (e2e), the gateway inside workerd.
// test/global-setup.ts starts the sandbox emulator on a loopback port and provides its URL.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'lib',
          include: [
            'test/lib/**/*.test.ts',
            'test/runtimes/**/*.test.ts',
            // The CLI, and the scripts and documents the repository's tooling keeps in step.
            'test/cli/**/*.test.ts',
            'test/scripts/**/*.test.ts',
            // The operator console's client code, under Node with stubbed fetch.
            'test/console/**/*.test.ts',
          ],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'package',
          include: ['test/package/**/*.test.ts'],
          environment: 'node',
          // Packs the package once and installs it into a fresh consumer project.
          globalSetup: ['test/package/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 90_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) =>
            workerTestOptions(inject('sandboxUrl'), {
              // Cases per property of the fuzz tests (the fuzz-*.test.ts files under
              // test/worker): the full count in CI, a quick sample locally.
              FUZZ_RUNS: process.env.FUZZ_RUNS ?? (process.env.CI ? '10000' : '200'),
            }),
          ),
        ],
        test: {
          name: 'worker',
          include: ['test/worker/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/worker/apply-migrations.ts'],
        },
      },
    ],
  },
});
