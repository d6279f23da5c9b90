/**
 * The deliveries a bulk recovery takes (migrations/0011): those matching its filter read
 * oldest first in keyset pages on (created_at, id), counted for a preview, and one page
 * reset to `pending` under the job's compare-and-set. Only the filters given become
 * conditions, so SQLite can use the index on (status, created_at, id). Each statement runs
 * on one event shard; on a shard other than `DB` it reads the subscriptions through a
 * snapshot (`view`, worker/db/subscription-snapshot.ts). Every time is epoch milliseconds;
 * statements bind with `?N`; `db` is the D1 binding of the shard (by default `DB`).
 */
import type { DeliveryTargetRow } from './deliveries.ts';
import { RECOVERABLE_STATUSES, type RecoveryFilter, type RecoveryJob } from './recovery-jobs.ts';
import { advanceRecoveryJobStatement, JOB_GUARD, outcomeOf } from './recovery-shard-pages.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  snapshotBinds,
  subscriptionsCte,
} from './subscription-snapshot.ts';

/** A delivery a recovery matched, and whether its subscription can take it. */
export interface RecoveryCandidate {
  readonly id: string;
  readonly createdAt: number;
  /** The subscription its delivery is (or, for a missed event, will be) for. */
  readonly subscriptionId: string;
  /** `false` when the subscription is disabled or deleted: the delivery is skipped. */
  readonly enabled: boolean;
}

/** What a preview counted. */
export interface RecoveryCount {
  /** Matching deliveries, at most the cap. */
  readonly matched: number;
  /** Of those, the ones a job would skip (subscription disabled or deleted). */
  readonly skippedDisabled: number;
  /** More than the cap match: `matched` is the cap. */
  readonly capped: boolean;
}

/** What one step of a job read and decided, for {@link takeRecoveryPage}. */
export interface RecoveryStep {
  /** The page number the step acts for: taken only while the job's `pages` equals it. */
  readonly page: number;
  readonly candidates: readonly RecoveryCandidate[];
  /** No page follows this one in its shard. */
  readonly last: boolean;
  /**
   * The shard the walk goes on in after this one's last page (its binding name); absent:
   * none, the job is done after it.
   */
  readonly next?: string;
}

/**
 * The next page of deliveries the job's filter matches, oldest first, after its cursor and
 * created before `upTo`.
 *
 * @param job - the job (its filter and cursor).
 * @param upTo - exclusive bound on `created_at`: deliveries created once the job started are
 *   not its business (they are on their first schedule), whatever `until` says.
 * @param pageSize - rows to read, at least 1.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export async function readRecoveryPage(
  db: D1Database,
  job: RecoveryJob,
  upTo: number,
  pageSize: number,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<RecoveryCandidate[]> {
  const query = matching(job.filter, upTo, job.cursor);
  const limit = query.bind(pageSize);
  const { results } = await db
    .prepare(
      `${subscriptionsCte(view, query.values.length + 1)}SELECT d.id, d.created_at, d.subscription_id,
         COALESCE(s.enabled, 0) AS enabled ${query.from}
       ORDER BY d.created_at, d.id LIMIT ${limit}`,
    )
    .bind(...query.values, ...snapshotBinds(view))
    .all<{ id: string; created_at: number; subscription_id: string; enabled: number }>();
  return results.map((row) => ({
    id: row.id,
    createdAt: row.created_at,
    subscriptionId: row.subscription_id,
    enabled: row.enabled === 1,
  }));
}

/**
 * Counts the deliveries `filter` matches now, up to `cap` (one query reading at most
 * `cap + 1` rows, so a preview over months of deliveries stays bounded).
 *
 * @param filter - the filter.
 * @param upTo - exclusive bound on `created_at` (the current time).
 * @param cap - the most counted.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 */
export async function countRecoverable(
  db: D1Database,
  filter: RecoveryFilter,
  upTo: number,
  cap: number,
  view: SubscriptionsView = SUBSCRIPTIONS_TABLE,
): Promise<RecoveryCount> {
  const query = matching(filter, upTo, null);
  const limit = query.bind(cap + 1);
  const row = await db
    .prepare(
      `${subscriptionsCte(view, query.values.length + 1)}SELECT COUNT(*) AS matched,
         COALESCE(SUM(enabled = 0), 0) AS skipped FROM (
         SELECT COALESCE(s.enabled, 0) AS enabled ${query.from} LIMIT ${limit})`,
    )
    .bind(...query.values, ...snapshotBinds(view))
    .first<{ matched: number; skipped: number }>();
  const matched = row?.matched ?? 0;
  return {
    matched: Math.min(matched, cap),
    skippedDisabled: row?.skipped ?? 0,
    capped: matched > cap,
  };
}

/**
 * The counts of several shards as one: matched summed and capped at `cap` (`capped` when a
 * shard was capped or the sum passes it), skipped summed (at most the matched reported).
 * One shard's count is answered as it is.
 *
 * @param counts - one per shard, each counted with the same cap.
 * @param cap - the most counted.
 */
export function sumRecoveryCounts(counts: readonly RecoveryCount[], cap: number): RecoveryCount {
  const [only] = counts;
  if (counts.length === 1 && only !== undefined) return only;
  const matched = counts.reduce((sum, count) => sum + count.matched, 0);
  const skipped = counts.reduce((sum, count) => sum + count.skippedDisabled, 0);
  const capped = matched > cap || counts.some((count) => count.capped);
  const reported = Math.min(matched, cap);
  return { matched: reported, skippedDisabled: Math.min(skipped, reported), capped };
}

/**
 * Takes one page for the job on `DB`, in one transaction: resets its deliveries of enabled
 * subscriptions that are still in a recoverable status to `pending`, due `now`, and moves
 * the job's cursor and counts on (to the next shard after the shard's last page, `done`
 * after the walk's). Both writes are made only while the job is `running` with
 * `pages = step.page`, so a second run of the same step (a redelivered message) changes
 * nothing.
 *
 * @param job - the job.
 * @param step - the page number, what was read, whether it is the shard's last and the
 *   shard that follows.
 * @param now - the reset and update time.
 * @returns the ids reset (to enqueue), or `null` when the page was already taken or the job
 *   is no longer running.
 * @throws whatever D1 throws (nothing is written then).
 */
export async function takeRecoveryPage(
  db: D1Database,
  job: RecoveryJob,
  step: RecoveryStep,
  now: number,
): Promise<string[] | null> {
  const wanted = step.candidates.filter((candidate) => candidate.enabled).map((c) => c.id);
  const [reset, moved] = await db.batch<{ id: string }>([
    resetPageStatement(db, job, { page: step.page, wanted, now }, JOB_GUARD, SUBSCRIPTIONS_TABLE),
    // changes(): the rows the reset above changed, in the same transaction.
    advanceRecoveryJobStatement(
      db,
      job.id,
      outcomeOf(step, step.candidates.length - wanted.length),
      now,
    ),
  ]);
  if ((moved?.results.length ?? 0) === 0) return null;
  return (reset?.results ?? []).map((row) => row.id);
}

/**
 * The reset of a page's deliveries to `pending`, due `now`: those of `wanted` still in a
 * status the job recovers whose subscription is enabled, only while `guard` holds (it reads
 * the job id as `?4` and the page as `?5`). Its `results` are the {@link DeliveryTargetRow}s
 * reset.
 *
 * @param job - the job (its id and status filter).
 * @param page - the page number, the ids to reset and the time.
 * @param guard - the SQL condition under which the page is still to take.
 * @param view - how `db` reads the subscriptions.
 */
export function resetPageStatement(
  db: D1Database,
  job: RecoveryJob,
  page: { readonly page: number; readonly wanted: readonly string[]; readonly now: number },
  guard: string,
  view: SubscriptionsView,
): D1PreparedStatement {
  const statuses = job.filter.status === null ? RECOVERABLE_STATUSES : [job.filter.status];
  return db
    .prepare(
      `${subscriptionsCte(view, 6)}UPDATE deliveries SET status = 'pending', next_attempt_at = ?2, updated_at = ?2
         WHERE id IN (SELECT value FROM json_each(?1))
           AND status IN (SELECT value FROM json_each(?3))
           AND EXISTS (SELECT 1 FROM subscriptions AS s
             WHERE s.id = deliveries.subscription_id AND s.enabled = 1)
           AND ${guard}
         RETURNING id, subscription_id`,
    )
    .bind(
      JSON.stringify(page.wanted),
      page.now,
      JSON.stringify(statuses),
      job.id,
      page.page,
      ...snapshotBinds(view),
    );
}

/** The FROM and WHERE of a filter's deliveries, and their bound values. */
interface MatchingQuery {
  readonly from: string;
  readonly values: Array<string | number>;
  /** Binds one more value; returns its `?N`. */
  readonly bind: (value: string | number) => string;
}

function matching(
  filter: RecoveryFilter,
  upTo: number,
  after: RecoveryJob['cursor'],
): MatchingQuery {
  const values: Array<string | number> = [];
  const bind = (value: string | number): string => {
    values.push(value);
    return `?${values.length}`;
  };
  const upper = filter.until === null ? upTo : Math.min(filter.until, upTo);
  const conditions = [
    filter.status === null
      ? `d.status IN ('failed', 'pending')`
      : `d.status = ${bind(filter.status)}`,
    `d.created_at >= ${bind(filter.since)}`,
    `d.created_at < ${bind(upper)}`,
  ];
  if (filter.subscriptionId !== null) {
    conditions.push(`d.subscription_id = ${bind(filter.subscriptionId)}`);
  }
  if (filter.eventType !== null) conditions.push(`e.event_type = ${bind(filter.eventType)}`);
  if (after !== null) {
    // A row value comparison: strictly after the last delivery read, in (created_at, id) order.
    conditions.push(`(d.created_at, d.id) > (${bind(after.at)}, ${bind(after.id)})`);
  }
  const events =
    filter.eventType === null ? '' : 'JOIN webhook_events AS e ON e.event_id = d.event_id';
  const from = `FROM deliveries AS d ${events}
    LEFT JOIN subscriptions AS s ON s.id = d.subscription_id
    WHERE ${conditions.join(' AND ')}`;
  return { from, values, bind };
}
