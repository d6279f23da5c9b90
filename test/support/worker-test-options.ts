/**
 * The Cloudflare test plugin's options for the gateway inside workerd, shared by the worker
 * tests (vitest.config.ts) and the load model's measuring run (bench/scale/vitest.config.ts):
 * wrangler.toml's bindings in local mode with the sandbox as upstream, the migrations to
 * apply (test/worker/fresh-storage.ts), and two more D1 databases for the sharding
 * tests, which name them in `D1_SHARDS` per request (the default is `DB` alone).
 */
import { readD1Migrations } from '@cloudflare/vitest-plugin';

/** The test databases beside `DB`, for the tests that spread keys over shards. */
const TEST_SHARD_BINDINGS = ['DB_SHARD_1', 'DB_SHARD_2'] as const;

/**
 * The options `cloudflareTest` takes for the gateway.
 *
 * @param sandboxUrl - the sandbox emulator's URL (the global set-up provides it).
 * @param bindings - more bindings, or other values for these.
 */
export async function workerTestOptions(sandboxUrl: string, bindings: Record<string, string> = {}) {
  return {
    wrangler: { configPath: './wrangler.toml' },
    miniflare: {
      d1Databases: Object.fromEntries(
        TEST_SHARD_BINDINGS.map((binding) => [binding, `edgepay-test-${binding.toLowerCase()}`]),
      ),
      bindings: {
        // Local mode: a loopback upstream and short test tokens; the production rules are
        // tested by test/worker/config.test.ts with their own settings.
        GATEWAY_MODE: 'local',
        RATE_LIMIT_PER_MINUTE: '0',
        // Off for the ingress tests' bursts; test/worker/routes/webhooks-rate-limit.test.ts
        // turns it on per request.
        WEBHOOK_RATE_LIMIT_PER_MINUTE: '0',
        UPSTREAM_BASE_URL: sandboxUrl,
        UPSTREAM_KEY_ID: 'sandbox-key',
        UPSTREAM_SECRET: 'sandbox-secret',
        GATEWAY_CALLERS: JSON.stringify([{ name: 'test', token: 'test-gateway-token' }]),
        ADMIN_TOKEN: 'test-admin-token',
        WEBHOOK_SECRET: 'sandbox-secret',
        // Off for the ingress/fan-out tests, whose money events name no real upstream
        // record; test/worker/relay/confirmation.test.ts turns it on per request.
        CONFIRM_MONEY_EVENTS: 'false',
        // Read on every use: the tests change subscriptions in D1 directly and expect the next
        // event or attempt to see it; test/worker/relay/subscription-cache.test.ts sets a lifetime.
        SUBSCRIPTION_CACHE_SEC: '0',
        TEST_MIGRATIONS: await readD1Migrations('migrations'),
        ...bindings,
      },
    },
  };
}
