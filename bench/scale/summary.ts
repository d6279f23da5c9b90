/**
 * The one line a `npm run bench -- scale` run ends with, for checks to read: what one event
 * and one idempotent POST write in every store and cost per million, the queries an event
 * makes of the one store that every event shares (`DB`), and whether the 100-million-a-day
 * configuration keeps every documented limit at or below half. Pure, like ./model.ts.
 */
import type { ModelResult } from './model.ts';
import type { TargetResult } from './target.ts';
import type { Measured } from './units.ts';

/** The traffic `target_100m` is judged at (docs/deploy.md): 30 days kept, one subscription. */
export const TARGET_100M = {
  eventsPerDay: 100_000_000,
  retentionDays: 30,
  peakPostsPerSecond: 2000,
  // Assumed (docs/assumptions.md, "Load model"): the day's average is a quarter of the peak.
  averagePostsPerSecond: 500,
  headroom: 0.5,
  sizeHeadroom: 0.8,
} as const;

/**
 * Whether a solved target keeps every limit at or below its headroom: each ceiling shards
 * do not raise, and the shards it needs (every per-shard limit is then at its headroom).
 *
 * @param result - the target solved at {@link TARGET_100M}.
 */
function holds(result: TargetResult): boolean {
  return result.beyond.every((item) => item.use <= TARGET_100M.headroom);
}

/**
 * The summary line: `scale: event rows_written=<n> usd_per_million=<x> shared_queries=<q>;
 * post rows_written=<m> usd_per_million=<y>; target_100m=<holds|fails>`.
 *
 * @param measured - the measurements (the event purge's rows written per event among them).
 * @param model - the model of one shard, one subscription per event.
 * @param target - the target solved at {@link TARGET_100M}.
 */
export function scaleLine(measured: Measured, model: ModelResult, target: TargetResult): string {
  const { event, post, costPerMillion } = model;
  const { purge } = measured;
  const purgeRows = purge.rowsWritten === undefined ? 0 : purge.rowsWritten / purge.eventsPurged;
  const eventRows = event.d1RowsWritten + event.outboxRowsWritten + purgeRows;
  const postRows = post.d1RowsWritten + post.keyRowsWritten;
  const figure = (n: number) => String(Number(n.toFixed(2)));
  return (
    `scale: event rows_written=${figure(eventRows)} usd_per_million=${figure(costPerMillion.events.total ?? 0)} ` +
    `shared_queries=${figure(event.d1StatementsOnDb)}; ` +
    `post rows_written=${figure(postRows)} usd_per_million=${figure(costPerMillion.posts.total ?? 0)}; ` +
    `target_100m=${holds(target) ? 'holds' : 'fails'}`
  );
}
