// The D1 databases the `D1_SHARDS` setting names, looked up in the Worker's bindings.
import { configurationError } from '../config/read.ts';

/**
 * The D1 database bound as `name`.
 *
 * @param env - the Worker's bindings.
 * @param name - a binding name from `D1_SHARDS`.
 * @returns the database.
 * @throws {HttpError} 503 `configuration_error` naming `D1_SHARDS` (and logged) when no
 *   D1 database is bound under that name.
 */
export function shardDatabase(env: object, name: string): D1Database {
  const binding = (env as Record<string, unknown>)[name];
  if (isD1Database(binding)) return binding;
  throw configurationError(
    'D1_SHARDS',
    `names "${name}", which is not a D1 database binding (add it to wrangler.toml's d1_databases)`,
  );
}

// A D1 binding by its shape: another kind of binding (KV, a queue) has no `prepare`.
function isD1Database(value: unknown): value is D1Database {
  if (typeof value !== 'object' || value === null) return false;
  return typeof (value as Partial<Record<'prepare', unknown>>).prepare === 'function';
}
