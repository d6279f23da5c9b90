/**
 * D1 queries on `event_forced_replays` (migrations/0008): the append-only history of forced
 * replays of events the payment service did not confirm. Rows are only ever inserted (a
 * trigger refuses updates) and leave only with their event. Every time is epoch
 * milliseconds; `db` is always the D1 binding.
 */

/** An admin's replay of an event the payment service did not confirm: who and when. */
export interface ForcedReplay {
  /** When it was forced, epoch milliseconds. */
  readonly at: number;
  /** The operator name sent with the replay, or `admin` when none was. */
  readonly by: string;
  /** The client address the admin request came from (`CF-Connecting-IP`), or `unknown`. */
  readonly from: string;
}

interface ForcedReplayRow {
  forced_at: number;
  forced_by: string;
  forced_from: string;
}

/**
 * The statement appending a forced replay to its event's history, for the same
 * `DB.batch()` as the replay's delivery rows (both land, or neither).
 *
 * @param eventId - the event replayed.
 * @param forced - who, from where and when (epoch ms).
 */
export function appendForcedReplayStatement(
  db: D1Database,
  eventId: string,
  forced: ForcedReplay,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO event_forced_replays (event_id, forced_at, forced_by, forced_from)
       VALUES (?1, ?2, ?3, ?4)`,
    )
    .bind(eventId, forced.at, forced.by, forced.from);
}

/**
 * Every forced replay of an event, oldest first.
 *
 * @param eventId - the event.
 */
export async function listForcedReplays(db: D1Database, eventId: string): Promise<ForcedReplay[]> {
  const { results } = await db
    .prepare(
      `SELECT forced_at, forced_by, forced_from FROM event_forced_replays
       WHERE event_id = ?1 ORDER BY forced_at, rowid`,
    )
    .bind(eventId)
    .all<ForcedReplayRow>();
  return results.map((row) => ({ at: row.forced_at, by: row.forced_by, from: row.forced_from }));
}
