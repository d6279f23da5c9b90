/**
 * D1 queries on `delivery_attempts` (migrations/0004, its trigger and operator 0011): the
 * record of each attempt the consumer makes, written with the delivery's new state in one
 * transaction, and read by the admin API. The answer excerpt is stored compressed when that is
 * smaller (worker/db/compact-body.ts). Every time is epoch milliseconds; statements bind
 * with `?N`; `db` is always the D1 binding.
 */
import { compactText, expandNullableText, type StoredValue, utf8Prefix } from './compact-body.ts';
import type { DeliveryStatus } from './deliveries.ts';

/**
 * The most bytes of a subscriber's answer an attempt keeps (2 KB), counted as the UTF-8 of the
 * stored text, so an answer of bytes that are not UTF-8 (each read back as a 3-byte U+FFFD)
 * cannot store more either: a chatty subscriber cannot grow the database.
 */
export const RESPONSE_EXCERPT_MAX_BYTES = 2048;

/**
 * What started an attempt: `schedule` (the first send and the relay's own retries),
 * `retry` (an operator's retry of the delivery), `replay` (an operator's replay of its
 * event) or `recover` (a bulk recovery job).
 */
export const ATTEMPT_TRIGGERS = ['schedule', 'retry', 'replay', 'recover'] as const;

/** One of {@link ATTEMPT_TRIGGERS}. */
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

/**
 * An operator's request for an attempt (a retry, a replay or a recovery), carried by the
 * queue message. The first attempt of the delivery that starts at or after `requestedAt`
 * is recorded with its trigger and operator; the retries on the schedule that follow are
 * `schedule` again.
 */
export interface OperatorRequest {
  readonly trigger: Exclude<AttemptTrigger, 'schedule'>;
  /** The operator's name, `null` when none was given. */
  readonly operator: string | null;
  /** When the operator asked, epoch milliseconds. */
  readonly requestedAt: number;
}

/** One recorded attempt of a delivery. */
export interface DeliveryAttemptRecord {
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly startedAt: number;
  /** The subscriber's HTTP status; `null` when no response came (network error, timeout). */
  readonly status: number | null;
  /** Milliseconds from the request to the end of the excerpt read. */
  readonly latencyMs: number;
  readonly error: string | null;
  /** The start of the response body as text, at most {@link RESPONSE_EXCERPT_MAX_BYTES} bytes of UTF-8. */
  readonly responseExcerpt: string | null;
  readonly trigger: AttemptTrigger;
  /** Who asked for it (`retry`, `replay`, `recover`), `null` when no name was given. */
  readonly operator: string | null;
}

/**
 * What {@link recordDeliveryAttempt} writes: the attempt, the operator's request its
 * message carried (absent or `null`: none, a `schedule` attempt), and the delivery's new state.
 */
export interface AttemptOutcome
  extends Omit<DeliveryAttemptRecord, 'deliveryId' | 'attempt' | 'trigger' | 'operator'> {
  readonly request?: OperatorRequest | null;
  readonly deliveryStatus: DeliveryStatus;
  readonly nextAttemptAt: number | null;
}

interface DeliveryAttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: number;
  status: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: StoredValue | null;
  trigger: string;
  operator: string | null;
}

/**
 * Every attempt of a delivery, first attempt first.
 *
 * @param deliveryId - the delivery id.
 */
export async function listDeliveryAttempts(
  db: D1Database,
  deliveryId: string,
): Promise<DeliveryAttemptRecord[]> {
  const { results } = await db
    .prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ?1 ORDER BY attempt')
    .bind(deliveryId)
    .all<DeliveryAttemptRow>();
  return Promise.all(
    results.map(async (row) => ({
      deliveryId: row.delivery_id,
      attempt: row.attempt,
      startedAt: row.started_at,
      status: row.status,
      latencyMs: row.latency_ms,
      error: row.error,
      responseExcerpt: await expandNullableText(row.response_excerpt),
      // The column's CHECK holds it to the four triggers.
      trigger: row.trigger as AttemptTrigger,
      operator: row.operator,
    })),
  );
}

/**
 * The statements that record an attempt (numbered `attempts + 1`) and the delivery's new
 * state, to run in one batch (one transaction), alone or with the attempt's health
 * statements (one round trip per attempt). A `delivered` delivery stays delivered (a redelivered message's late
 * failure must not undo a success). The attempt carries the operator's request only when it
 * started at or after the request's time and no other attempt of the delivery did: the time, not the
 * message's delivery count, decides, because a message may come back without an attempt
 * (an error before sending, or a postponed send), and an attempt already in flight when the
 * operator asked is not theirs.
 *
 * The excerpt is cut to {@link RESPONSE_EXCERPT_MAX_BYTES} bytes of UTF-8 and stored
 * compacted, so its stored value never exceeds that bound either.
 *
 * @param deliveryId - the delivery id.
 * @param outcome - what the attempt got and where the delivery goes next.
 * @param now - the record time, epoch milliseconds.
 * @returns the insert of the attempt, then the update of the delivery.
 */
export async function deliveryAttemptStatements(
  db: D1Database,
  deliveryId: string,
  outcome: AttemptOutcome,
  now: number,
): Promise<D1PreparedStatement[]> {
  const excerpt =
    outcome.responseExcerpt === null
      ? null
      : await compactText(utf8Prefix(outcome.responseExcerpt, RESPONSE_EXCERPT_MAX_BYTES));
  return [
    db
      .prepare(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, status, latency_ms,
           error, response_excerpt, trigger, operator)
         SELECT id, attempts + 1, ?2, ?3, ?4, ?5, ?6,
           CASE WHEN mine THEN ?7 ELSE 'schedule' END, CASE WHEN mine THEN ?8 END
         FROM deliveries, (SELECT ?9 IS NOT NULL AND ?2 >= ?9 AND NOT EXISTS (
             SELECT 1 FROM delivery_attempts WHERE delivery_id = ?1 AND started_at >= ?9
           ) AS mine)
         WHERE id = ?1`,
      )
      .bind(
        deliveryId,
        outcome.startedAt,
        outcome.status,
        outcome.latencyMs,
        outcome.error,
        excerpt,
        outcome.request?.trigger ?? 'schedule',
        outcome.request?.operator ?? null,
        outcome.request?.requestedAt ?? null,
      ),
    db
      .prepare(
        `UPDATE deliveries
         SET attempts = attempts + 1, last_status = ?3, updated_at = ?5,
           status = CASE WHEN status = 'delivered' THEN status ELSE ?2 END,
           next_attempt_at = CASE WHEN status = 'delivered' THEN NULL ELSE ?4 END
         WHERE id = ?1`,
      )
      .bind(deliveryId, outcome.deliveryStatus, outcome.status, outcome.nextAttemptAt, now),
  ];
}

/**
 * Records an attempt and the delivery's new state in one transaction: the statements of
 * {@link deliveryAttemptStatements} as one batch.
 *
 * @param deliveryId - the delivery id.
 * @param outcome - what the attempt got and where the delivery goes next.
 * @param now - the record time, epoch milliseconds.
 * @internal Exported for the tests, which record attempts directly (the relay records each
 *   with its health, through {@link deliveryAttemptStatements}).
 */
export async function recordDeliveryAttempt(
  db: D1Database,
  deliveryId: string,
  outcome: AttemptOutcome,
  now: number,
): Promise<void> {
  await db.batch(await deliveryAttemptStatements(db, deliveryId, outcome, now));
}
