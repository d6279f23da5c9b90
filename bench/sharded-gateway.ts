// The gateway with its webhook events spread over three local D1
// databases, for the relay benchmark's (b3): a
// configuration generated into the run's state (never into the repository), the migrations
// applied to each database, and after the load a check that every database got some of the
// events.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countRows, migrate, root, startWorker, type WorkerPorts } from './harness.ts';
import { BenchmarkError } from './lifecycle.ts';

/** The databases the sharded gateway adds to `DB`. */
const EXTRA_SHARDS = ['DB_SHARD_1', 'DB_SHARD_2'];

// Replaces the one occurrence of `from` in `text`; a wrangler.toml that no longer reads
// this way must stop the run rather than start a gateway configured differently.
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at === -1 || text.indexOf(from, at + 1) !== -1) {
    throw new Error(`wrangler.toml: expected exactly one \`${from}\` to rewrite`);
  }
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * Writes, into `dir`, a copy of the repository's wrangler.toml (its top level only, paths
 * made absolute) that spreads the webhook events over `DB` and
 * `extra` more local D1 databases: each bound under its name with its own placeholder id,
 * and `D1_SHARDS` listing `DB` then them, as one generation. The Worker is renamed
 * (`-shards` appended) so that wrangler's registry of local dev sessions keeps it apart
 * from a plain gateway. The copy has no `[build]`: its relative command would run from
 * `dir`, and the console's assets are already built by the plain gateway's `wrangler dev`,
 * started first.
 *
 * @param extra - binding names of the added databases, e.g. `['DB_SHARD_1', 'DB_SHARD_2']`.
 * @returns the configuration file's path.
 * @throws when wrangler.toml no longer has a line this rewrites.
 */
function writeShardedConfig(dir: string, extra: readonly string[]): string {
  const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8');
  const production = toml.indexOf('\n[env.production]\n');
  if (production === -1) throw new Error('wrangler.toml: no [env.production] to cut off');
  let config = toml.slice(0, production + 1);
  config = replaceOnce(config, 'name = "edgepay-gateway"', 'name = "edgepay-gateway-shards"');
  config = replaceOnce(
    config,
    'main = "worker/index.ts"',
    `main = "${join(root, 'worker', 'index.ts')}"`,
  );
  config = replaceOnce(
    config,
    'migrations_dir = "migrations"',
    `migrations_dir = "${join(root, 'migrations')}"`,
  );
  config = replaceOnce(
    config,
    'directory = "./console/dist"',
    `directory = "${join(root, 'console', 'dist')}"`,
  );
  config = replaceOnce(
    config,
    '[build]\ncommand = "node scripts/build-console.ts"\nwatch_dir = ["console/src", "console/static"]\n',
    '',
  );
  config = replaceOnce(config, 'D1_SHARDS = "DB"', `D1_SHARDS = "${['DB', ...extra].join(',')}"`);
  for (const [index, binding] of extra.entries()) {
    const id = `00000000-0000-4000-8000-${String(index + 1).padStart(12, '0')}`;
    config +=
      `\n[[d1_databases]]\nbinding = "${binding}"\ndatabase_name = "edgepay-${binding.toLowerCase()}"\n` +
      `database_id = "${id}"\nmigrations_dir = "${join(root, 'migrations')}"\n`;
  }
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'wrangler.toml');
  writeFileSync(path, config);
  return path;
}

/** The gateway with three shards: its process, its local state and its configuration. */
export interface ShardedGateway {
  /** Its wrangler dev, the leader of its process group. */
  readonly worker: ChildProcess;
  /** Its local state (the three databases), configuration and wrangler.log. */
  readonly state: string;
  /** The generated wrangler configuration. */
  readonly config: string;
}

/**
 * Starts the gateway whose webhook events are spread over `DB`,
 * `DB_SHARD_1` and `DB_SHARD_2` (`D1_SHARDS`, one generation), with its configuration and
 * local state in `state` and the migrations applied to each database. Start it after a
 * plain gateway's `wrangler dev`, which builds the console's assets this one serves.
 *
 * @param args - further wrangler dev arguments (`--env-file`, `--var`...).
 * @throws when a migration or wrangler dev fails (see `startWorker`).
 */
export async function startShardedGateway(
  state: string,
  args: string[],
  ports: WorkerPorts,
): Promise<ShardedGateway> {
  const config = writeShardedConfig(state, EXTRA_SHARDS);
  for (const binding of ['DB', ...EXTRA_SHARDS]) await migrate(state, binding, config);
  const worker = await startWorker(['-c', config, ...args], ports, state);
  return { worker, state, config };
}

/**
 * Prints how many rows of `table` each of the sharded gateway's databases holds after the
 * load (its warm-ups included).
 *
 * @param label - the case, e.g. `(b3)`, and what the rows are, e.g. `webhook events`.
 * @param answered - the requests the gateway answered 2xx in the measured runs: each stored
 *   one row.
 * @throws {BenchmarkError} when a database holds none (the rows were not spread, so the
 *   case measured one shard), or the databases hold fewer rows than `answered`.
 */
export async function assertRowsSpread(
  sharded: ShardedGateway,
  table: string,
  label: { readonly name: string; readonly rows: string },
  answered: number,
): Promise<void> {
  const counts: [string, number][] = [];
  for (const binding of ['DB', ...EXTRA_SHARDS]) {
    counts.push([binding, await countRows(sharded.state, sharded.config, binding, table)]);
  }
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  const share = (count: number) => ((100 * count) / Math.max(total, 1)).toFixed(1);
  console.log(
    `\n${label.name}'s ${label.rows} per database after the load: ${counts
      .map(([binding, count]) => `${binding} ${count} (${share(count)} %)`)
      .join(', ')}; ${total} in all`,
  );
  const empty = counts.filter(([, count]) => count === 0).map(([binding]) => binding);
  if (empty.length > 0) {
    throw new BenchmarkError(
      `${label.name}: no ${label.rows} in ${empty.join(', ')}: they were not spread over the ` +
        `three databases, so ${label.name} measured something else than three shards.`,
    );
  }
  if (total < answered) {
    throw new BenchmarkError(
      `${label.name}: ${total} ${label.rows} stored for ${answered} requests answered 2xx in ` +
        'the measured runs alone: some answers stored nothing.',
    );
  }
}
