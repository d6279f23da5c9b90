import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    interface Env {
      /** D1 migrations read by vitest.config.ts, applied in apply-migrations.ts. */
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
