import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    interface Env {
      /** D1 migrations read by vitest.config.ts, applied in fresh-storage.ts. */
      TEST_MIGRATIONS: D1Migration[];
      /** The test databases beside `DB` (test/support/worker-test-options.ts). */
      DB_SHARD_1: D1Database;
      DB_SHARD_2: D1Database;
      /** Generated cases per fuzz property (vitest.config.ts): the tier's count, 200 in `npm test`, 10,000 in `npm run test:all`. */
      FUZZ_RUNS: string;
    }
  }
}
