/**
 * D1 queries on `recovery_jobs` (migrations/0011, 0017): bulk recoveries that re-enqueue the
 * undelivered deliveries matching a filter, one keyset page per step, walking the event
 * shards one after another. A job is started once per filter while it runs; each page is
 * taken by a compare-and-set on the job's page count (on `DB`, in the same transaction as
 * the reset of its deliveries; on another shard, after the page's own guard there:
 * worker/db/recovery-shard-pages.ts), so a step run twice (a redelivered message) resets
 * and counts its page once. Every time is epoch milliseconds;
 * statements bind with `?N`; `db` is always the D1 binding.
 */

/** The delivery statuses a recovery may take: never `delivered` (that would send a success again). */
export const RECOVERABLE_STATUSES = ['failed', 'pending'] as const;

/** One of {@link RECOVERABLE_STATUSES}. */
type RecoverableStatus = (typeof RECOVERABLE_STATUSES)[number];

/** The states of a job: `running` until its last page (`done`) or until it cannot go on (`failed`). */
export const RECOVERY_JOB_STATES = ['running', 'done', 'failed'] as const;

/** One of {@link RECOVERY_JOB_STATES}. */
type RecoveryJobState = (typeof RECOVERY_JOB_STATES)[number];

/**
 * What a job walks: `deliveries` (a bulk recovery: existing deliveries matching its filter)
 * or `missed_events` (a re-enabled subscription's events that made no delivery for it while
 * it was disabled: worker/db/missed-event-pages.ts).
 */
export type RecoveryJobKind = 'deliveries' | 'missed_events';

/** Which deliveries a recovery takes, on their `created_at`; `null` = no filter. */
export interface RecoveryFilter {
  /** Inclusive. */
  readonly since: number;
  /** Exclusive. */
  readonly until: number | null;
  readonly subscriptionId: string | null;
  /** `null`: both `failed` and `pending`. */
  readonly status: RecoverableStatus | null;
  readonly eventType: string | null;
}

/** A stored job: its filter, who started it, and its progress. */
export interface RecoveryJob {
  readonly id: string;
  readonly kind: RecoveryJobKind;
  readonly filter: RecoveryFilter;
  readonly operator: string | null;
  readonly state: RecoveryJobState;
  /** Pages done so far. */
  readonly pages: number;
  /**
   * The (created_at, id) of the last delivery read in the shard the walk is in (for a
   * `missed_events` job, the event's (received_at, event_id)); `null` before its first page.
   */
  readonly cursor: { readonly at: number; readonly id: string } | null;
  /**
   * The event shard the walk is in (its binding name); absent: the first of the walk, as
   * with one shard. A job walks every event shard one after another.
   */
  readonly shard?: string;
  readonly matched: number;
  readonly enqueued: number;
  readonly skippedDisabled: number;
  readonly error: string | null;
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
}

interface RecoveryJobRow {
  id: string;
  kind: string;
  since: number;
  until: number | null;
  subscription_id: string | null;
  delivery_status: string | null;
  event_type: string | null;
  operator: string | null;
  state: string;
  pages: number;
  cursor_at: number | null;
  cursor_id: string | null;
  cursor_shard: string | null;
  matched: number;
  enqueued: number;
  skipped_disabled: number;
  error: string | null;
  started_at: number;
  updated_at: number;
  finished_at: number | null;
}

/**
 * The filter as canonical JSON (fixed key order, `null` for no filter): two requests with
 * the same filter get the same key, whatever order their fields came in.
 *
 * @param filter - the filter.
 */
function recoveryFilterKey(filter: RecoveryFilter, kind: RecoveryJobKind): string {
  const { since, until, subscriptionId, status, eventType } = filter;
  const key = [since, until, subscriptionId, status, eventType];
  // A bulk recovery's key keeps its first form, so a job running across the upgrade still
  // holds its filter.
  return JSON.stringify(kind === 'deliveries' ? key : [kind, ...key]);
}

/**
 * Starts a job for `filter` unless one with the same filter is running: that one is
 * answered instead. A running job without progress for `stallMs` is first marked
 * `failed` (its messages were lost), so a filter is never blocked for good.
 *
 * @param id - the new job's id, `rcv_<uuid>`.
 * @param operator - who asked, `null` when no name was given.
 * @param now - the start time.
 * @param stallMs - how long a running job may go without progress, in milliseconds.
 * @param kind - what the job walks. @default 'deliveries'
 * @returns the running job with this filter, and whether it was just started.
 * @throws {Error} when no job could be read back; whatever D1 throws.
 */
export async function startRecoveryJob(
  db: D1Database,
  id: string,
  filter: RecoveryFilter,
  operator: string | null,
  now: number,
  stallMs: number,
  kind: RecoveryJobKind = 'deliveries',
): Promise<{ job: RecoveryJob; started: boolean }> {
  const key = recoveryFilterKey(filter, kind);
  const [, , read] = await db.batch<RecoveryJobRow>([
    db
      .prepare(
        `UPDATE recovery_jobs SET state = 'failed', finished_at = ?2, updated_at = ?2,
           error = 'stalled: no progress for ' || ?3 || ' minutes'
         WHERE filter_key = ?1 AND state = 'running' AND updated_at < ?2 - ?4`,
      )
      // The minutes as text: D1 binds a JS number as a REAL, which `||` writes as "60.0".
      .bind(key, now, String(Math.round(stallMs / 60_000)), stallMs),
    db
      .prepare(
        `INSERT INTO recovery_jobs (id, filter_key, since, until, subscription_id,
           delivery_status, event_type, operator, started_at, updated_at, kind)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)
         ON CONFLICT (filter_key) WHERE state = 'running' DO NOTHING`,
      )
      .bind(
        id,
        key,
        filter.since,
        filter.until,
        filter.subscriptionId,
        filter.status,
        filter.eventType,
        operator,
        now,
        kind,
      ),
    db.prepare(`SELECT * FROM recovery_jobs WHERE filter_key = ?1 AND state = 'running'`).bind(key),
  ]);
  const row = read?.results[0];
  if (row === undefined) throw new Error('recovery job not found after its insert');
  return { job: toRecoveryJob(row), started: row.id === id };
}

/**
 * One job.
 *
 * @param id - the job id.
 * @returns the job, or `undefined` when there is none.
 */
export async function findRecoveryJob(
  db: D1Database,
  id: string,
): Promise<RecoveryJob | undefined> {
  const row = await db
    .prepare('SELECT * FROM recovery_jobs WHERE id = ?1')
    .bind(id)
    .first<RecoveryJobRow>();
  return row === null ? undefined : toRecoveryJob(row);
}

/**
 * The most recently started jobs, newest first.
 *
 * @param limit - how many, at least 1.
 */
export async function listRecoveryJobs(db: D1Database, limit: number): Promise<RecoveryJob[]> {
  const { results } = await db
    .prepare('SELECT * FROM recovery_jobs ORDER BY started_at DESC, id DESC LIMIT ?1')
    .bind(limit)
    .all<RecoveryJobRow>();
  return results.map(toRecoveryJob);
}

/**
 * Ends a running job as `failed`, with the reason.
 *
 * @param id - the job id.
 * @param error - why it cannot go on, shown to the operator.
 * @param now - the end time.
 */
export async function failRecoveryJob(
  db: D1Database,
  id: string,
  error: string,
  now: number,
): Promise<void> {
  await db
    .prepare(
      `UPDATE recovery_jobs SET state = 'failed', error = ?2, finished_at = ?3, updated_at = ?3
       WHERE id = ?1 AND state = 'running'`,
    )
    .bind(id, error, now)
    .run();
}

/**
 * Deletes jobs that finished (`done` or `failed`) before `finishedBefore`, oldest first, at
 * most `limit` in one statement. A running job is never deleted, however old: it still holds
 * its filter and its progress. The table holds one row per recovery an operator started, so
 * reading it without an index on `finished_at` stays cheap.
 *
 * @param finishedBefore - epoch ms; jobs finished earlier go.
 * @param limit - most rows deleted, at least 1.
 * @returns how many were deleted.
 */
export async function purgeRecoveryJobsBefore(
  db: D1Database,
  finishedBefore: number,
  limit: number,
): Promise<number> {
  const { results } = await db
    .prepare(
      `DELETE FROM recovery_jobs WHERE id IN (
         SELECT id FROM recovery_jobs WHERE state <> 'running' AND finished_at < ?1
         ORDER BY finished_at, id LIMIT ?2)
       RETURNING id`,
    )
    .bind(finishedBefore, limit)
    .all<{ id: string }>();
  return results.length;
}

function toRecoveryJob(row: RecoveryJobRow): RecoveryJob {
  return {
    id: row.id,
    // The column's CHECK holds it to the two kinds.
    kind: row.kind as RecoveryJobKind,
    filter: {
      since: row.since,
      until: row.until,
      subscriptionId: row.subscription_id,
      // The columns' CHECKs hold these to their lists.
      status: row.delivery_status as RecoverableStatus | null,
      eventType: row.event_type,
    },
    operator: row.operator,
    state: row.state as RecoveryJobState,
    pages: row.pages,
    cursor:
      row.cursor_at === null || row.cursor_id === null
        ? null
        : { at: row.cursor_at, id: row.cursor_id },
    ...(row.cursor_shard === null ? {} : { shard: row.cursor_shard }),
    matched: row.matched,
    enqueued: row.enqueued,
    skippedDisabled: row.skipped_disabled,
    error: row.error,
    startedAt: row.started_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}
