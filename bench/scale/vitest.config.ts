import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

// The load model's measuring run (`npm run bench -- scale` starts it): the worker tests'
// set-up (wrangler.toml's bindings, the migrations applied to a fresh local D1, the sandbox
// as upstream) with only test/worker/scale/measure-units.ts, which `npm test` never runs.
// Limits are set per request by the measuring file; everything else is as in vitest.config.ts.
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                GATEWAY_MODE: 'local',
                RATE_LIMIT_PER_MINUTE: '0',
                WEBHOOK_RATE_LIMIT_PER_MINUTE: '0',
                UPSTREAM_BASE_URL: inject('sandboxUrl'),
                UPSTREAM_KEY_ID: 'sandbox-key',
                UPSTREAM_SECRET: 'sandbox-secret',
                GATEWAY_CALLERS: JSON.stringify([{ name: 'test', token: 'test-gateway-token' }]),
                ADMIN_TOKEN: 'test-admin-token',
                WEBHOOK_SECRET: 'sandbox-secret',
                CONFIRM_MONEY_EVENTS: 'false',
                TEST_MIGRATIONS: await readD1Migrations('migrations'),
              },
            },
          })),
        ],
        test: {
          name: 'scale',
          include: ['test/worker/scale/measure-units.ts'],
          globalSetup: ['bench/scale/global-setup.ts'],
          setupFiles: ['test/worker/apply-migrations.ts'],
          testTimeout: 600_000,
        },
      },
    ],
  },
});
