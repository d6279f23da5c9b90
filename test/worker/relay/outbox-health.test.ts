/**
 * The attempt counts an outbox keeps for its subscription's success rate
 * (worker/relay/outbox-health.ts), on the real storage of an outbox object: counted per UTC
 * hour, the window of the current hour and the 23 before it, unsaved counts read with the
 * stored ones, and one write per save that drops the hours past the window.
 */
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { AttemptTally } from '../../../worker/relay/outbox-health.ts';
import { outboxOf } from './outbox-helpers.ts';

const HOUR_MS = 3_600_000;
const NOW = 1_900_000_000_000;

/** Runs `body` with a tally over the storage of an outbox of its own. */
function withTally<T>(body: (tally: AttemptTally, kv: SyncKvStorage) => T): Promise<T> {
  const outbox = outboxOf(`sub_tally_${crypto.randomUUID()}`);
  return runInDurableObject(outbox, (_, state) =>
    body(new AttemptTally(state.storage.kv), state.storage.kv),
  );
}

describe('AttemptTally', () => {
  it('should sum the current hour and the 23 before it', async () => {
    const counts = await withTally((tally) => {
      tally.count(true, NOW - 23 * HOUR_MS);
      tally.count(false, NOW);
      tally.count(true, NOW);
      tally.count(false, NOW - 25 * HOUR_MS);
      return tally.recent(NOW);
    });
    expect(counts).toEqual({ succeeded: 2, failed: 1 });
  });

  it('should read unsaved counts with the stored ones, and keep them once saved', async () => {
    const { before, after, stored } = await withTally((tally, kv) => {
      tally.count(true, NOW);
      tally.save(NOW);
      tally.count(false, NOW);
      const before = tally.recent(NOW);
      tally.save(NOW);
      const after = new AttemptTally(kv).recent(NOW);
      return { before, after, stored: kv.get('attempt_hours') };
    });
    expect(before).toEqual({ succeeded: 1, failed: 1 });
    // A new instance (a restart) reads what was saved.
    expect(after).toEqual({ succeeded: 1, failed: 1 });
    expect(stored).toEqual({ [Math.floor(NOW / HOUR_MS)]: { succeeded: 1, failed: 1 } });
  });

  it('should drop the hours past the window when it saves, and write nothing without counts', async () => {
    const stored = await withTally((tally, kv) => {
      tally.count(false, NOW - 30 * HOUR_MS);
      tally.save(NOW - 30 * HOUR_MS);
      tally.count(true, NOW);
      tally.save(NOW);
      kv.put('attempt_hours', { ...kv.get<object>('attempt_hours'), marker: true });
      // Nothing counted since: the stored value is left as it is.
      tally.save(NOW);
      return kv.get<Record<string, unknown>>('attempt_hours');
    });
    expect(Object.keys(stored ?? {})).toEqual([String(Math.floor(NOW / HOUR_MS)), 'marker']);
  });
});
