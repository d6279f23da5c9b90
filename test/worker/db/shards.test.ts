/**
 * Shard placement: the `D1_SHARDS` text read into generations, the key's shard fixed by its
 * SHA-256 (pinned values: a change would lose every record written under the old rule), and
 * where a write goes and what else it must check around a change of generation.
 */
import { describe, expect, it } from 'vitest';
import {
  everyShard,
  MAX_SHARDS_PER_GENERATION,
  parseShardGenerations,
  placeKey,
  type ShardGeneration,
  shardIndex,
} from '../../../worker/db/shards.ts';

const SWITCH = Date.parse('2027-01-04T00:00:00Z');
const HOUR_MS = 3_600_000;
const WINDOWS = { lookBackMs: 24 * HOUR_MS, switchWindowMs: 60_000 };
const GROWN: readonly ShardGeneration[] = [
  { from: Number.NEGATIVE_INFINITY, shards: ['DB'] },
  { from: SWITCH, shards: ['DB', 'DB_SHARD_1', 'DB_SHARD_2'] },
];

describe('parseShardGenerations', () => {
  it('should read one shard as one generation since always', () => {
    expect(parseShardGenerations('DB')).toEqual([
      { from: Number.NEGATIVE_INFINITY, shards: ['DB'] },
    ]);
  });

  it('should read later generations with their start times', () => {
    expect(
      parseShardGenerations(' DB ; 2027-01-04T00:00:00Z = DB, DB_SHARD_1 ,DB_SHARD_2'),
    ).toEqual(GROWN);
  });

  it.each([
    ['2027-01-04T00:00:00Z=DB', 'the first generation takes no start time'],
    ['DB; DB,DB_SHARD_1', 'generation 2 needs its start time'],
    ['DB; tomorrow=DB,DB_SHARD_1', 'generation 2: its start is not an ISO 8601 time'],
    ['DB; 2027-13-04T00:00:00Z=DB,DB_SHARD_1', 'is not an ISO 8601 time'],
    [
      'DB; 2027-01-04T00:00:00Z=DB,S1; 2027-01-03T00:00:00Z=DB,S1,S2',
      'generation 3 must start after generation 2',
    ],
    ['DB, shard-1', 'generation 1: a binding name must be letters, digits and underscores'],
    ['DB,', 'generation 1: a binding name must be'],
    ['DB; 2027-01-04T00:00:00Z=DB,DB', 'generation 2 lists a binding twice'],
  ])('should refuse %j', (text, problem) => {
    const result = parseShardGenerations(text);
    expect(typeof result).toBe('string');
    expect(result).toContain(problem);
  });

  it(`should refuse more than ${MAX_SHARDS_PER_GENERATION} shards in a generation`, () => {
    const names = Array.from({ length: MAX_SHARDS_PER_GENERATION + 1 }, (_, i) => `S${i}`);
    expect(parseShardGenerations(names.join(','))).toContain(
      `more than ${MAX_SHARDS_PER_GENERATION} shards`,
    );
    expect(parseShardGenerations(names.slice(1).join(','))).toHaveLength(1);
  });
});

describe('shardIndex', () => {
  it('should keep the placement rule: first four bytes of SHA-256, big-endian, modulo the count', async () => {
    // sha256("evt_2") begins e7a5..., 3,886,365,412: 1 of 3, 0 of 2.
    expect(await shardIndex('evt_1', 3)).toBe(0);
    expect(await shardIndex('evt_2', 3)).toBe(1);
    expect(await shardIndex('evt_2', 2)).toBe(0);
    expect(await shardIndex('caller\u0000key-1', 2)).toBe(1);
    expect(await shardIndex('anything', 1)).toBe(0);
  });

  it('should spread keys evenly', async () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) {
      const index = await shardIndex(`evt_${crypto.randomUUID()}`, 3);
      counts[index] = (counts[index] ?? 0) + 1;
    }
    // 3,000 keys: each shard gets 1,000 +- about 5 standard deviations.
    for (const count of counts) expect(count).toBeGreaterThan(870);
  });
});

describe('placeKey', () => {
  it('should put everything in the one shard with nothing else to check', async () => {
    const one = parseShardGenerations('DB') as ShardGeneration[];
    expect(await placeKey(one, 'evt_2', Date.now(), WINDOWS)).toEqual({ home: 'DB', others: [] });
  });

  it('should write to the old generation until the switch window', async () => {
    const at = SWITCH - 2 * WINDOWS.switchWindowMs;
    expect(await placeKey(GROWN, 'evt_2', at, WINDOWS)).toEqual({ home: 'DB', others: [] });
  });

  it('should also check the next generation in the switch window before it starts', async () => {
    const at = SWITCH - WINDOWS.switchWindowMs / 2;
    expect(await placeKey(GROWN, 'evt_2', at, WINDOWS)).toEqual({
      home: 'DB',
      others: ['DB_SHARD_1'],
    });
  });

  it('should write to the new generation and check the old one while its records are kept', async () => {
    expect(await placeKey(GROWN, 'evt_2', SWITCH, WINDOWS)).toEqual({
      home: 'DB_SHARD_1',
      others: ['DB'],
    });
    const late = SWITCH + WINDOWS.lookBackMs - 1;
    expect(await placeKey(GROWN, 'evt_2', late, WINDOWS)).toEqual({
      home: 'DB_SHARD_1',
      others: ['DB'],
    });
  });

  it('should stop checking the old generation once its retention has passed', async () => {
    const after = SWITCH + WINDOWS.lookBackMs;
    expect(await placeKey(GROWN, 'evt_2', after, WINDOWS)).toEqual({
      home: 'DB_SHARD_1',
      others: [],
    });
  });

  it('should check nothing else for a key whose shard is the same in both generations', async () => {
    // evt_1 is shard 0 of 3: DB in both generations.
    expect(await placeKey(GROWN, 'evt_1', SWITCH + HOUR_MS, WINDOWS)).toEqual({
      home: 'DB',
      others: [],
    });
  });
});

describe('everyShard', () => {
  it('should list every binding of every generation once, retired ones included', () => {
    const retired: readonly ShardGeneration[] = [
      { from: Number.NEGATIVE_INFINITY, shards: ['OLD'] },
      { from: SWITCH, shards: ['DB', 'DB_SHARD_1'] },
      { from: SWITCH + HOUR_MS, shards: ['DB', 'DB_SHARD_1', 'DB_SHARD_2'] },
    ];
    expect(everyShard(retired)).toEqual(['OLD', 'DB', 'DB_SHARD_1', 'DB_SHARD_2']);
  });
});
