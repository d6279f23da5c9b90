/**
 * Properties of shard placement over random generations, keys and times: what the claim's
 * exactness rests on. A key written at one time is found by every later writer within the
 * retention (it is that writer's home or among the others it looks in), and of two writers
 * under different generations close enough to race, the earlier one looks where the later
 * one writes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placeKey, type ShardGeneration } from '../../../worker/db/shards.ts';
import { FUZZ_PARAMETERS, fuzzTimeout } from '../fuzz-helpers.ts';

const BINDINGS = ['DB', 'S1', 'S2', 'S3', 'S4', 'S5'];
const HOUR_MS = 3_600_000;
const WINDOWS = { lookBackMs: 24 * HOUR_MS, switchWindowMs: 2 * 60_000 };

/**
 * One to four generations of distinct bindings, starting a second to 3 days apart (often
 * closer than one switch window, where a writer must look more than one generation ahead).
 */
const generations = fc
  .array(
    fc.record({
      gapMs: fc.oneof(
        fc.integer({ min: 1000, max: 3 * WINDOWS.switchWindowMs }),
        fc.integer({ min: 60_000, max: 72 * HOUR_MS }),
      ),
      shards: fc.subarray(BINDINGS, { minLength: 1 }),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((steps) => {
    let from = Date.parse('2027-01-01T00:00:00Z');
    return steps.map((step, index): ShardGeneration => {
      from += step.gapMs;
      return { from: index === 0 ? Number.NEGATIVE_INFINITY : from, shards: step.shards };
    });
  });

/** A time near one of the starts: from two switch windows before it to a day after. */
function timeAround(shards: readonly ShardGeneration[]): fc.Arbitrary<number> {
  const starts = [Date.parse('2027-01-01T00:00:00Z'), ...shards.slice(1).map((g) => g.from)];
  return fc
    .tuple(
      fc.constantFrom(...starts),
      fc.integer({ min: -2 * WINDOWS.switchWindowMs, max: 24 * HOUR_MS }),
    )
    .map(([start, offset]) => start + offset);
}

/**
 * Generations, a key, a first write's time and how much later a second write comes, in
 * milliseconds (0 to `maxLaterMs`).
 */
function twoWrites(maxLaterMs: number) {
  return generations.chain((shards) =>
    fc.tuple(
      fc.constant(shards),
      fc.string({ minLength: 1, maxLength: 40 }),
      timeAround(shards),
      fc.integer({ min: 0, max: maxLaterMs }),
    ),
  );
}

describe('shard placement (properties)', () => {
  it(
    'should find a key at every later write within its retention',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          twoWrites(WINDOWS.lookBackMs - 1),
          async ([shards, key, writtenAt, laterByMs]) => {
            const written = await placeKey(shards, key, writtenAt, WINDOWS);
            const later = await placeKey(shards, key, writtenAt + laterByMs, WINDOWS);
            expect([later.home, ...later.others]).toContain(written.home);
            expect(later.others).not.toContain(later.home);
          },
        ),
        FUZZ_PARAMETERS,
      );
    },
    fuzzTimeout(1),
  );

  it(
    'should have the earlier of two racing writers look where the later one writes',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          twoWrites(WINDOWS.switchWindowMs),
          async ([shards, key, earlierAt, laterByMs]) => {
            const earlier = await placeKey(shards, key, earlierAt, WINDOWS);
            const later = await placeKey(shards, key, earlierAt + laterByMs, WINDOWS);
            // Dekker's two halves: each writes its home, then looks in the other's.
            expect([earlier.home, ...earlier.others]).toContain(later.home);
            expect([later.home, ...later.others]).toContain(earlier.home);
          },
        ),
        FUZZ_PARAMETERS,
      );
    },
    fuzzTimeout(1),
  );
});
