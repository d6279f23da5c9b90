import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { workerTestOptions } from '../../test/support/worker-test-options.ts';

// The load model's measuring run (`npm run bench -- scale` starts it): the worker tests'
// set-up (test/support/worker-test-options.ts: wrangler.toml's bindings, the migrations,
// the sandbox as upstream) with only test/worker/scale/measure-units.ts, which `npm test` never runs.
// Limits are set per request by the measuring file; everything else is as in vitest.config.ts.
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) =>
            // The subscriptions' copy per isolate as shipped (the tests read on every use).
            workerTestOptions(inject('sandboxUrl'), { SUBSCRIPTION_CACHE_SEC: '10' }),
          ),
        ],
        test: {
          name: 'scale',
          include: ['test/worker/scale/measure-units.ts'],
          globalSetup: ['bench/scale/global-setup.ts'],
          setupFiles: ['test/worker/fresh-storage.ts'],
          testTimeout: 600_000,
        },
      },
    ],
  },
});
