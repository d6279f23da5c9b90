/**
 * The deliveries a bulk recovery takes (migrations/0011): those matching its filter read
 * oldest first in keyset pages on (created_at, id), counted for a preview, and one page
 * reset to `pending` under the job's compare-and-set. Only the filters given become
 * conditions, so SQLite can use the index on (status, created_at, id). Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */
import { RECOVERABLE_STATUSES, type RecoveryFilter, type RecoveryJob } from './recovery-jobs.ts';

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
  /** No page follows this one. */
  readonly last: boolean;
}

/**
 * The next page of deliveries the job's filter matches, oldest first, after its cursor and
 * created before `upTo`.
 *
 * @param job - the job (its filter and cursor).
 * @param upTo - exclusive bound on `created_at`: deliveries created once the job started are
 *   not its business (they are on their first schedule), whatever `until` says.
 * @param pageSize - rows to read, at least 1.
 */
export async function readRecoveryPage(
  db: D1Database,
  job: RecoveryJob,
  upTo: number,
  pageSize: number,
): Promise<RecoveryCandidate[]> {
  const query = matching(job.filter, upTo, job.cursor);
  const { results } = await db
    .prepare(
      `SELECT d.id, d.created_at, d.subscription_id, COALESCE(s.enabled, 0) AS enabled ${query.from}
       ORDER BY d.created_at, d.id LIMIT ${query.bind(pageSize)}`,
    )
    .bind(...query.values)
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
 */
export async function countRecoverable(
  db: D1Database,
  filter: RecoveryFilter,
  upTo: number,
  cap: number,
): Promise<RecoveryCount> {
  const query = matching(filter, upTo, null);
  const row = await db
    .prepare(
      `SELECT COUNT(*) AS matched, COALESCE(SUM(enabled = 0), 0) AS skipped FROM (
         SELECT COALESCE(s.enabled, 0) AS enabled ${query.from} LIMIT ${query.bind(cap + 1)})`,
    )
    .bind(...query.values)
    .first<{ matched: number; skipped: number }>();
  const matched = row?.matched ?? 0;
  return {
    matched: Math.min(matched, cap),
    skippedDisabled: row?.skipped ?? 0,
    capped: matched > cap,
  };
}

/**
 * Takes one page for the job, in one transaction: resets its deliveries of enabled
 * subscriptions that are still in a recoverable status to `pending`, due `now`, and moves
 * the job's cursor and counts on (`done` after the last page). Both writes are made only
 * while the job is `running` with `pages = step.page`, so a second run of the same step
 * (a redelivered message) changes nothing.
 *
 * @param job - the job.
 * @param step - the page number, what was read, and whether it is the last.
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
  const statuses = job.filter.status === null ? RECOVERABLE_STATUSES : [job.filter.status];
  const [reset, moved] = await db.batch<{ id: string }>([
    db
      .prepare(
        `UPDATE deliveries SET status = 'pending', next_attempt_at = ?2, updated_at = ?2
         WHERE id IN (SELECT value FROM json_each(?1))
           AND status IN (SELECT value FROM json_each(?3))
           AND EXISTS (SELECT 1 FROM subscriptions AS s
             WHERE s.id = deliveries.subscription_id AND s.enabled = 1)
           AND EXISTS (SELECT 1 FROM recovery_jobs AS j
             WHERE j.id = ?4 AND j.pages = ?5 AND j.state = 'running')
         RETURNING id`,
      )
      .bind(JSON.stringify(wanted), now, JSON.stringify(statuses), job.id, step.page),
    // changes(): the rows the reset above changed, in the same transaction.
    advanceRecoveryJobStatement(db, job, step, step.candidates.length - wanted.length, now),
  ]);
  if ((moved?.results.length ?? 0) === 0) return null;
  return (reset?.results ?? []).map((row) => row.id);
}

/**
 * The job's side of taking a page, to run in the same `DB.batch()` right after the statement
 * that wrote the page's rows: moves the cursor to the page's last candidate, adds the
 * candidates to `matched`, `skipped` to `skipped_disabled` and the rows the statement before
 * changed (`changes()`) to `enqueued`, counts the page, and ends the job `done` after the
 * last one; only while the job is `running` with `pages = step.page`. Its `results` hold the
 * job's id when it moved, none when the page was already taken.
 *
 * @param job - the job.
 * @param step - the page number, what was read, and whether it is the last.
 * @param skipped - how many candidates were left alone (subscription disabled or deleted).
 * @param now - the update time, epoch ms.
 */
export function advanceRecoveryJobStatement(
  db: D1Database,
  job: RecoveryJob,
  step: RecoveryStep,
  skipped: number,
  now: number,
): D1PreparedStatement {
  const last = step.candidates.at(-1);
  return db
    .prepare(
      `UPDATE recovery_jobs SET pages = pages + 1,
         cursor_at = COALESCE(?3, cursor_at), cursor_id = COALESCE(?4, cursor_id),
         matched = matched + ?5, skipped_disabled = skipped_disabled + ?6,
         enqueued = enqueued + changes(),
         state = CASE WHEN ?7 THEN 'done' ELSE state END,
         finished_at = CASE WHEN ?7 THEN ?8 END, updated_at = ?8
       WHERE id = ?1 AND pages = ?2 AND state = 'running'
       RETURNING id`,
    )
    .bind(
      job.id,
      step.page,
      last?.createdAt ?? null,
      last?.id ?? null,
      step.candidates.length,
      skipped,
      step.last ? 1 : 0,
      now,
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
