/**
 * Runs before each worker test file: every binding's data deleted (D1, KV, queues, Durable
 * Objects), the three test databases migrated, and the gateway's settings read anew, so each
 * file starts as in a fresh workerd.
 *
 * The worker project reuses one workerd for many files (`isolate: false`: starting one per
 * file cost about 1.8 s each, most of the project's time), and a workerd keeps its storage
 * and its modules' memory from file to file. Resetting them here gives every file what a
 * fresh workerd gave it: no subscription, delivery, cached answer or spent sign-in budget left
 * by another file, and an invalid setting logged again the first time it is read.
 */
import { applyD1Migrations, reset } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { forgetLoadedSettings } from '../../worker/config/read.ts';

await reset();
forgetLoadedSettings();
await Promise.all(
  [env.DB, env.DB_SHARD_1, env.DB_SHARD_2].map((db) => applyD1Migrations(db, env.TEST_MIGRATIONS)),
);
