/**
 * The storage of a subscription's outbox (worker/relay/subscriber-outbox.ts): one row per
 * delivery it holds, in the Durable Object's own SQLite, written synchronously, and the
 * stand-in for a queue message that lets the settle step ack or retry an attempt made there.
 * Every time is epoch milliseconds.
 */
import type { Handover } from './subscriber-outbox.ts';

/** A delivery the outbox holds. */
export interface OutboxRow {
  readonly deliveryId: string;
  /** The queue message body it came with (the operator's request, if any, included). */
  readonly body: Handover['body'];
  /** The number of its next attempt (1 for the first), as `message.attempts` counts. */
  readonly attempts: number;
  /** When its next attempt is due. */
  readonly dueAt: number;
  /** When its attempt out started; `null` when none is out. */
  readonly sendingSince: number | null;
}

/**
 * What became of an attempt: `retryInSec` set to try again, absent when settled; `parkMs` set
 * when it did not start because an earlier event of its reference must go first (ordered
 * subscriptions), with the `reference` to wake it by.
 */
export interface SettleDecision {
  readonly retryInSec?: number;
  readonly parkMs?: number;
  readonly reference?: string | null;
}

interface Row extends Record<string, SqlStorageValue> {
  delivery_id: string;
  body: string;
  attempts: number;
  due_at: number;
  sending_since: number | null;
  sent_at: number | null;
}

const toRow = (row: Row): OutboxRow => ({
  deliveryId: row.delivery_id,
  body: JSON.parse(row.body) as Handover['body'],
  attempts: row.attempts,
  dueAt: row.due_at,
  sendingSince: row.sending_since,
});

/** The outbox's queries (see {@link openOutboxStore}). */
export interface OutboxStore {
  /** Takes a handover: a new row due now, or an existing one updated (see accept). */
  accept(handover: Handover, now: number): void;
  /** Rows to start now, oldest due first, at most `limit`, none for which `skip` is true. */
  due(now: number, limit: number, skip: (deliveryId: string) => boolean): OutboxRow[];
  /** How many rows are due at `now` and not out. */
  dueCount(now: number): number;
  /**
   * The earliest due time of a row, or `null` when there is none; a row marked out counts
   * as due `watchdogMs` after its attempt started (for when that attempt was lost).
   */
  nextDueAt(watchdogMs: number): number | null;
  markSending(deliveryId: string, now: number): void;
  scheduleRetry(deliveryId: string, retryInSec: number, now: number): void;
  remove(deliveryId: string): void;
  /** Holds a row back until `dueAt`, its reference noted, its attempt count unchanged. */
  park(deliveryId: string, reference: string | null, dueAt: number): void;
  /** Makes the rows waiting on `reference` due at `now` (an earlier event of it settled). */
  wake(reference: string, now: number): void;
}

/**
 * Opens (and creates on first use) the outbox table.
 *
 * @param sql - the Durable Object's `ctx.storage.sql`.
 */
export function openOutboxStore(sql: SqlStorage): OutboxStore {
  // WITHOUT ROWID: the primary key is the table itself, so holding and releasing a delivery
  // write one row each, not one more for a separate index of `delivery_id`.
  sql.exec(`CREATE TABLE IF NOT EXISTS outbox (
    delivery_id TEXT NOT NULL PRIMARY KEY,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    due_at INTEGER NOT NULL,
    sending_since INTEGER,
    retry_delay_sec INTEGER,
    reference TEXT,
    sent_at INTEGER
  ) WITHOUT ROWID`);
  // Outboxes created before rows kept their reference, or the time their latest message was
  // sent, get the column.
  const columns = sql
    .exec<{ name: string }>(`SELECT name FROM pragma_table_info('outbox')`)
    .toArray()
    .map((column) => column.name);
  if (!columns.includes('reference')) sql.exec('ALTER TABLE outbox ADD COLUMN reference TEXT');
  if (!columns.includes('sent_at')) sql.exec('ALTER TABLE outbox ADD COLUMN sent_at INTEGER');
  return {
    accept({ body, attempts, sentAt }, now) {
      const held = sql
        .exec<Row>('SELECT * FROM outbox WHERE delivery_id = ?', body.deliveryId)
        .toArray()[0];
      if (held === undefined) {
        // A message the queue delivers again continues its count, so a handover that kept
        // failing does not restart the schedule.
        sql.exec(
          `INSERT INTO outbox (delivery_id, body, attempts, due_at, sending_since, sent_at)
           VALUES (?, ?, ?, ?, NULL, ?)`,
          body.deliveryId,
          JSON.stringify(body),
          Math.max(1, Math.floor(attempts)),
          now,
          sentAt,
        );
        return;
      }
      // A message the queue delivers again keeps the time it was sent: it was taken over
      // already. Its delivery count cannot tell: a new message (the sweeper, an operator's
      // retry, a recovery) whose first handover failed also comes back with a count of 2,
      // and ignoring it would leave the operator's request waiting for the next scheduled
      // retry, hours away. A row kept from before sent_at existed falls back on the count.
      const repeated = held.sent_at === null ? attempts > 1 : sentAt <= held.sent_at;
      if (repeated) return;
      // A new message asks for an attempt now, with a fresh schedule as a new queue message
      // had. A row with its attempt out, or already due (held back by the subscription's
      // limits), keeps its place and count.
      if (held.sending_since !== null || held.due_at <= now) {
        sql.exec('UPDATE outbox SET sent_at = ? WHERE delivery_id = ?', sentAt, body.deliveryId);
        return;
      }
      sql.exec(
        'UPDATE outbox SET body = ?, attempts = 1, due_at = ?, sent_at = ? WHERE delivery_id = ?',
        JSON.stringify(body),
        now,
        sentAt,
        body.deliveryId,
      );
    },
    due(now, limit, skip) {
      if (limit <= 0) return [];
      // A row marked out that this instance does not hold was interrupted by a restart.
      return sql
        .exec<Row>(
          `SELECT * FROM outbox WHERE sending_since IS NOT NULL OR due_at <= ?
           ORDER BY due_at, delivery_id`,
          now,
        )
        .toArray()
        .filter((row) => !skip(row.delivery_id))
        .slice(0, limit)
        .map(toRow);
    },
    dueCount(now) {
      const [row] = sql
        .exec<{ n: number }>(
          'SELECT count(*) AS n FROM outbox WHERE sending_since IS NULL AND due_at <= ?',
          now,
        )
        .toArray();
      return row?.n ?? 0;
    },
    nextDueAt(watchdogMs) {
      const [row] = sql
        .exec<{ next: number | null }>(
          'SELECT min(coalesce(sending_since + ?, due_at)) AS next FROM outbox',
          watchdogMs,
        )
        .toArray();
      return row?.next ?? null;
    },
    markSending(deliveryId, now) {
      sql.exec('UPDATE outbox SET sending_since = ? WHERE delivery_id = ?', now, deliveryId);
    },
    scheduleRetry(deliveryId, retryInSec, now) {
      sql.exec(
        `UPDATE outbox SET attempts = attempts + 1, due_at = ?, sending_since = NULL,
           retry_delay_sec = ? WHERE delivery_id = ?`,
        now + retryInSec * 1000,
        retryInSec,
        deliveryId,
      );
    },
    remove(deliveryId) {
      sql.exec('DELETE FROM outbox WHERE delivery_id = ?', deliveryId);
    },
    park(deliveryId, reference, dueAt) {
      sql.exec(
        'UPDATE outbox SET due_at = ?, sending_since = NULL, reference = ? WHERE delivery_id = ?',
        dueAt,
        reference,
        deliveryId,
      );
    },
    wake(reference, now) {
      sql.exec(
        'UPDATE outbox SET due_at = min(due_at, ?) WHERE reference = ? AND sending_since IS NULL',
        now,
        reference,
      );
    },
  };
}

/**
 * A queue message's stand-in for an attempt the outbox makes: the settle step reads its
 * body and `attempts` and calls `ack` or `retry` as it would on the queue's message, and
 * `decision` then says which it called.
 *
 * @param row - the delivery's outbox row.
 */
export function outboxMessage(row: OutboxRow): {
  message: Message<unknown>;
  decision: () => SettleDecision;
} {
  let decided: SettleDecision = {};
  const message: Message<unknown> = {
    id: row.deliveryId,
    timestamp: new Date(row.dueAt),
    body: row.body,
    attempts: row.attempts,
    ack: () => {
      decided = {};
    },
    retry: (options?: QueueRetryOptions) => {
      decided = { retryInSec: options?.delaySeconds ?? 0 };
    },
  };
  return { message, decision: () => decided };
}
