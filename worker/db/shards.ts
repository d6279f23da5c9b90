/**
 * Where a record lives when storage is spread over several D1 databases (shards). The
 * shards are listed in generations (the `D1_SHARDS` setting): each generation names its D1
 * bindings and the time from which it takes new writes. A record is written to its key's
 * shard in the generation in effect when it is written, and stays there for its whole
 * retention, so adding shards later moves nothing: a key written before the change is
 * still found in the older generation until its retention has passed. The placement of a
 * key in a generation is a pure function of the key and the generation's list (the first
 * four bytes of the key's SHA-256, modulo the number of shards), fixed forever: changing it
 * would lose every record written under it.
 *
 * Around a change of generation, deduplication stays exact by the order of two steps: a
 * writer whose placement lists `others` first stores the key in its home shard, then looks
 * for it in the others. Of two writers of the same key under different generations, at
 * least one finds the other's row (whichever looked second); what a writer that finds one
 * does is its store's rule (worker/db/event-shards.ts for the webhook events).
 */

/** One generation of shards. */
export interface ShardGeneration {
  /** When it starts taking new writes, epoch milliseconds; the first one since always. */
  readonly from: number;
  /** Its D1 binding names, in placement order (at least one, no repeats). */
  readonly shards: readonly string[];
}

/** Where one key is written and where else it may already be. */
export interface ShardPlacement {
  /** The binding this write goes to: the key's shard in the generation in effect. */
  readonly home: string;
  /**
   * Other bindings that may hold the key: its shard in each older generation whose writes
   * are still within `lookBackMs`, and its shard in each later generation starting within
   * `switchWindowMs` (a writer that already follows it may be storing the same key there).
   * Never the home binding; oldest generation first.
   */
  readonly others: readonly string[];
}

/** How far placement looks beyond the generation in effect. */
export interface PlacementWindows {
  /** Longest a record is kept (its retention), in milliseconds. */
  readonly lookBackMs: number;
  /**
   * Longest a writer can take between reading the clock and landing its write, in
   * milliseconds: writers this close to a generation's start check both generations.
   */
  readonly switchWindowMs: number;
}

// A D1 binding name as wrangler.toml writes them.
const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Most shards one generation may list: room above the 90 the load model's target needs
 * (bench/README.md), while the cron still reaches every shard in one run (each gets at least
 * one purge statement of the 900 a run makes).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const MAX_SHARDS_PER_GENERATION = 128;

/**
 * Reads `D1_SHARDS`: generations separated by `;`, each a comma-separated list of D1
 * binding names, every one after the first preceded by the ISO 8601 time it starts from
 * and `=`. Example: `DB; 2027-01-04T00:00:00Z=DB,DB_SHARD_1,DB_SHARD_2` (one shard, then
 * three from that time).
 *
 * @param text - the setting's text.
 * @returns the generations, oldest first, or the problem in words (never quoting the text:
 *   a problem is logged, and a mistyped setting could hold anything).
 */
export function parseShardGenerations(text: string): readonly ShardGeneration[] | string {
  const generations: ShardGeneration[] = [];
  const parts = text.split(';').map((part) => part.trim());
  for (const [index, part] of parts.entries()) {
    const separator = part.indexOf('=');
    if (index === 0 && separator !== -1) {
      return 'the first generation takes no start time (write only its binding names)';
    }
    if (index > 0 && separator === -1) {
      return `generation ${index + 1} needs its start time: <ISO 8601 time>=<bindings>`;
    }
    const startText = index === 0 ? '' : part.slice(0, separator).trim();
    const from = index === 0 ? Number.NEGATIVE_INFINITY : Date.parse(startText);
    if (Number.isNaN(from) || (index > 0 && !/\d{4}-\d{2}-\d{2}T/.test(startText))) {
      return `generation ${index + 1}: its start is not an ISO 8601 time (2027-01-04T00:00:00Z)`;
    }
    const previous = generations.at(-1);
    if (previous !== undefined && from <= previous.from) {
      return `generation ${index + 1} must start after generation ${index}`;
    }
    const names = part
      .slice(separator + 1)
      .split(',')
      .map((name) => name.trim());
    const problem = namesProblem(names, index + 1);
    if (problem !== undefined) return problem;
    generations.push({ from, shards: names });
  }
  return generations;
}

function namesProblem(names: readonly string[], generation: number): string | undefined {
  if (names.length > MAX_SHARDS_PER_GENERATION) {
    return `generation ${generation} lists more than ${MAX_SHARDS_PER_GENERATION} shards`;
  }
  for (const name of names) {
    if (!BINDING_NAME.test(name)) {
      return `generation ${generation}: a binding name must be letters, digits and underscores, not starting with a digit`;
    }
  }
  if (new Set(names).size !== names.length) {
    return `generation ${generation} lists a binding twice`;
  }
  return undefined;
}

/**
 * The index of a key's shard among `count` shards: the first four bytes of the SHA-256 of
 * its UTF-8 text, big-endian, modulo `count`.
 *
 * @param key - the record's shard key (an event id; a caller and idempotency key).
 * @param count - the generation's number of shards, at least 1.
 * @internal Exported for the tests, which pin the rule.
 */
export async function shardIndex(key: string, count: number): Promise<number> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return new DataView(digest).getUint32(0) % count;
}

/**
 * Where a key written at `at` goes, and which other bindings may already hold it.
 *
 * @param generations - from {@link parseShardGenerations}, oldest first (at least one).
 * @param key - the record's shard key.
 * @param at - the write's time, epoch milliseconds.
 * @param windows - the retention to look back over and the switch window.
 * @returns the home binding and the others (see {@link ShardPlacement}).
 */
export async function placeKey(
  generations: readonly ShardGeneration[],
  key: string,
  at: number,
  windows: PlacementWindows,
): Promise<ShardPlacement> {
  const current = generationAt(generations, at);
  const home = await shardOf(generations[current], key);
  const others: string[] = [];
  for (const [index, generation] of generations.entries()) {
    const next = generations[index + 1];
    const relevant =
      // An older generation, while what it took is still kept.
      (index < current && next !== undefined && at < next.from + windows.lookBackMs) ||
      // A later one, just before it starts (every one that close: generations may start
      // within one switch window of each other).
      (index > current && at >= generation.from - windows.switchWindowMs);
    if (!relevant) continue;
    const binding = await shardOf(generation, key);
    if (binding !== home && !others.includes(binding)) others.push(binding);
  }
  return { home, others };
}

// The index of the generation in effect at `at`: the last one started by then.
function generationAt(generations: readonly ShardGeneration[], at: number): number {
  let current = 0;
  for (const [index, generation] of generations.entries()) {
    if (generation.from <= at) current = index;
  }
  return current;
}

async function shardOf(generation: ShardGeneration | undefined, key: string): Promise<string> {
  if (generation === undefined || generation.shards.length === 0) {
    throw new Error('no shard generation');
  }
  // One shard holds every key: nothing to hash.
  const index =
    generation.shards.length === 1 ? 0 : await shardIndex(key, generation.shards.length);
  return generation.shards[index] as string;
}

/**
 * Every binding any generation names, each once, in the order of the generations: what
 * housekeeping (the retention purges) visits, since a retired generation may still hold
 * rows until its last ones are purged.
 *
 * @param generations - oldest first.
 */
export function everyShard(generations: readonly ShardGeneration[]): readonly string[] {
  return [...new Set(generations.flatMap((generation) => generation.shards))];
}
