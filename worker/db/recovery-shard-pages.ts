/**
 * How a recovery job's page is taken once (migrations/0011, 0017). The job's row lives in
 * `DB`; its pages walk every event shard. On `DB` a page's writes and the job's move are one
 * transaction guarded by the job's page count ({@link JOB_GUARD}). A statement on another
 * shard cannot read the job's row, so there the page has a row of its own in
 * `recovery_pages`: the page's writes run only while that row is absent
 * ({@link PAGE_GUARD}) and write it in the same transaction, with what the page did. The job
 * in `DB` then moves by the usual compare-and-set on its page count, with the counts that
 * row recorded, whichever run of the step gets there. Every time is epoch milliseconds;
 * statements bind with `?N`.
 */
import type { DeliveryTargetRow } from './deliveries.ts';
import { type EventShard, MAIN_SHARD } from './event-shards.ts';
import type { RecoveryStep } from './recovery-pages.ts';
import {
  SUBSCRIPTIONS_TABLE,
  type SubscriptionsView,
  subscriptionsViewFor,
} from './subscription-snapshot.ts';

/** The page is still to take on `DB`: the job is running at this page (`?4` job, `?5` page). */
export const JOB_GUARD = `EXISTS (SELECT 1 FROM recovery_jobs AS j
             WHERE j.id = ?4 AND j.pages = ?5 AND j.state = 'running')`;

/** The page is still to take on a shard: it has no row there yet (`?4` job, `?5` page). */
export const PAGE_GUARD = `NOT EXISTS (SELECT 1 FROM recovery_pages AS p
             WHERE p.job_id = ?4 AND p.page = ?5)`;

/**
 * How long a page's row is kept on its shard, in ms: far longer than a step takes from
 * reading the job to taking the page, so a late copy of a page message never finds the row
 * gone and takes the page again.
 */
const PAGE_ROW_KEEP_MS = 86_400_000;

/** Old page rows a take deletes on its shard at most: a bounded statement. */
const PAGE_ROWS_PURGED_PER_TAKE = 200;

/** What taking one page did, as the job's row records it. */
export interface PageOutcome {
  readonly page: number;
  /** The position of the page's last row in its shard; `null`: the page read none. */
  readonly cursor: { readonly at: number; readonly id: string } | null;
  /** Rows the page read. */
  readonly matched: number;
  /** Of those, left alone (their subscription disabled or deleted). */
  readonly skipped: number;
  /** No page follows in its shard. */
  readonly last: boolean;
  /** The shard the walk goes on in after this one's last page; absent: none, the job ends. */
  readonly next?: string | undefined;
}

/**
 * The outcome of a step as read.
 *
 * @param step - the page number, what was read, whether it is its shard's last, the next shard.
 * @param skipped - how many candidates were left alone.
 */
export function outcomeOf(step: RecoveryStep, skipped: number): PageOutcome {
  const last = step.candidates.at(-1);
  return {
    page: step.page,
    cursor: last === undefined ? null : { at: last.createdAt, id: last.id },
    matched: step.candidates.length,
    skipped,
    last: step.last,
    next: step.next,
  };
}

/**
 * The job's side of taking a page: moves the cursor to the page's last row (or, after its
 * shard's last page, to the start of the next shard), adds the page's counts, counts the
 * page, and ends the job `done` after the walk's last page; only while the job is `running`
 * with `pages = outcome.page`. Its `results` hold the job's id when it moved, none when the
 * page was already taken.
 *
 * @param db - the `DB` binding, where the job lives.
 * @param jobId - the job.
 * @param outcome - what the page did.
 * @param now - the update time.
 * @param enqueued - how many of the page's deliveries were reset or written; absent: the
 *   rows the statement before it in the same `DB.batch()` changed (`changes()`).
 */
export function advanceRecoveryJobStatement(
  db: D1Database,
  jobId: string,
  outcome: PageOutcome,
  now: number,
  enqueued?: number,
): D1PreparedStatement {
  const done = outcome.last && outcome.next === undefined;
  const moveTo = outcome.last ? (outcome.next ?? null) : null;
  return db
    .prepare(
      `UPDATE recovery_jobs SET pages = pages + 1,
         cursor_shard = COALESCE(?9, cursor_shard),
         cursor_at = CASE WHEN ?9 IS NULL THEN COALESCE(?3, cursor_at) END,
         cursor_id = CASE WHEN ?9 IS NULL THEN COALESCE(?4, cursor_id) END,
         matched = matched + ?5, skipped_disabled = skipped_disabled + ?6,
         enqueued = enqueued + ${enqueued === undefined ? 'changes()' : '?10'},
         state = CASE WHEN ?7 THEN 'done' ELSE state END,
         finished_at = CASE WHEN ?7 THEN ?8 END, updated_at = ?8
       WHERE id = ?1 AND pages = ?2 AND state = 'running'
       RETURNING id`,
    )
    .bind(
      jobId,
      outcome.page,
      outcome.cursor?.at ?? null,
      outcome.cursor?.id ?? null,
      outcome.matched,
      outcome.skipped,
      done ? 1 : 0,
      now,
      moveTo,
      ...(enqueued === undefined ? [] : [enqueued]),
    );
}

/** A page taken on a shard: what this run wrote, and what the page did (whoever took it). */
export interface ShardPageTaken {
  /** The deliveries this run reset or wrote (to enqueue); none when another run took it. */
  readonly written: readonly DeliveryTargetRow[];
  readonly outcome: PageOutcome;
  /** How many deliveries the page reset or wrote. */
  readonly enqueued: number;
}

interface PageRow {
  cursor_at: number | null;
  cursor_id: string | null;
  matched: number;
  skipped_disabled: number;
  enqueued: number;
  last: number;
}

/**
 * Takes a page on a shard other than `DB`, in one transaction there: `write` (the page's
 * reset or insert, guarded by {@link PAGE_GUARD}), then the page's row with what it did
 * (`changes()` of `write` as its enqueued count; nothing when the row is there already),
 * then reads the row back. Page rows older than a day are deleted first.
 *
 * @param db - the shard's binding.
 * @param jobId - the job.
 * @param outcome - what this run read (recorded only when this run takes the page).
 * @param write - the page's guarded write, `RETURNING id, subscription_id`.
 * @param now - the time taken.
 * @returns what this run wrote and the page's recorded outcome (with `outcome.next`).
 * @throws whatever D1 throws (nothing is written then).
 */
export async function takePageOnShard(
  db: D1Database,
  jobId: string,
  outcome: PageOutcome,
  write: D1PreparedStatement,
  now: number,
): Promise<ShardPageTaken> {
  const [, written, , read] = await db.batch<DeliveryTargetRow & PageRow>([
    db
      .prepare(
        `DELETE FROM recovery_pages WHERE (job_id, page) IN (
           SELECT job_id, page FROM recovery_pages WHERE taken_at < ?1 ORDER BY taken_at LIMIT ?2)`,
      )
      .bind(now - PAGE_ROW_KEEP_MS, PAGE_ROWS_PURGED_PER_TAKE),
    write,
    // changes(): the rows `write` changed, in the same transaction.
    db
      .prepare(
        `INSERT INTO recovery_pages (job_id, page, cursor_at, cursor_id, matched,
           skipped_disabled, enqueued, last, taken_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, changes(), ?7, ?8)
         ON CONFLICT (job_id, page) DO NOTHING`,
      )
      .bind(
        jobId,
        outcome.page,
        outcome.cursor?.at ?? null,
        outcome.cursor?.id ?? null,
        outcome.matched,
        outcome.skipped,
        outcome.last ? 1 : 0,
        now,
      ),
    db
      .prepare('SELECT * FROM recovery_pages WHERE job_id = ?1 AND page = ?2')
      .bind(jobId, outcome.page),
  ]);
  const row = read?.results[0];
  if (row === undefined) throw new Error(`recovery page ${outcome.page} not found on its shard`);
  const recorded: PageOutcome = {
    page: outcome.page,
    cursor:
      row.cursor_at === null || row.cursor_id === null
        ? null
        : { at: row.cursor_at, id: row.cursor_id },
    matched: row.matched,
    skipped: row.skipped_disabled,
    last: row.last === 1,
    next: outcome.next,
  };
  return { written: written?.results ?? [], outcome: recorded, enqueued: row.enqueued };
}

/**
 * How each shard's statements read the subscriptions: the table on `DB`, one snapshot read
 * from `DB` for all the others (none read when `DB` is the only shard).
 *
 * @param main - the `DB` binding.
 * @param shards - the shards, in any order.
 * @returns one view per shard, in the same order.
 * @throws whatever D1 throws reading the snapshot.
 */
export async function subscriptionsViewsOf(
  main: D1Database,
  shards: readonly EventShard[],
): Promise<SubscriptionsView[]> {
  const other = shards.find((shard) => shard.name !== MAIN_SHARD);
  const snapshot =
    other === undefined ? SUBSCRIPTIONS_TABLE : await subscriptionsViewFor(main, other);
  return shards.map((shard) => (shard.name === MAIN_SHARD ? SUBSCRIPTIONS_TABLE : snapshot));
}
