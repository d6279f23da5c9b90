import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

// Setup files run before each test file; applying is idempotent. The shard databases
// (test/support/worker-test-options.ts) get the same schema as `DB`.
await Promise.all(
  [env.DB, env.DB_SHARD_1, env.DB_SHARD_2].map((db) => applyD1Migrations(db, env.TEST_MIGRATIONS)),
);
