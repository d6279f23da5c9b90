/**
 * D1 query on `deliveries` (migrations/0004) for the relay's backlog alert: the oldest
 * delivery that is due and still `pending`. Every time is epoch milliseconds.
 */

/** The oldest due delivery, and how many are due. */
export interface OldestDueDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly subscriptionId: string;
  /** Since when it is due: its creation when never attempted, its next attempt's time otherwise. */
  readonly dueAt: number;
  /** `pending` deliveries due at `now`, this one included. */
  readonly dueCount: number;
}

interface OldestDueRow {
  id: string;
  event_id: string;
  subscription_id: string;
  due_at: number;
  due_count: number;
}

/**
 * The `pending` delivery that has been due the longest at `now`. A delivery never attempted
 * counts from its creation (the sweeper's re-enqueue moves its `next_attempt_at`, not its
 * age); one waiting for a retry counts from the time that retry was due.
 *
 * @param now - epoch ms.
 * @returns the oldest and the number due, or `undefined` when nothing is due.
 */
export async function findOldestDueDelivery(
  db: D1Database,
  now: number,
): Promise<OldestDueDelivery | undefined> {
  const row = await db
    .prepare(
      `SELECT id, event_id, subscription_id,
         CASE WHEN attempts = 0 THEN created_at
           ELSE COALESCE(next_attempt_at, created_at) END AS due_at,
         COUNT(*) OVER () AS due_count
       FROM deliveries
       WHERE status = 'pending' AND COALESCE(next_attempt_at, created_at) <= ?1
       ORDER BY due_at, id
       LIMIT 1`,
    )
    .bind(now)
    .first<OldestDueRow>();
  return row === null
    ? undefined
    : {
        id: row.id,
        eventId: row.event_id,
        subscriptionId: row.subscription_id,
        dueAt: row.due_at,
        dueCount: row.due_count,
      };
}
