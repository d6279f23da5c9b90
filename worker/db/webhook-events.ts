/**
 * D1 queries on `webhook_events` (migrations/0002, 0005, 0006): the ingress's insert-once
 * of an event keyed by `event_id`, and the read of one event. Every time is epoch
 * milliseconds; statements bind with `?N`.
 */

/**
 * Where an event stands: `confirmed` when the upstream's verify endpoint agrees with a
 * money event, `unconfirmed` when it does not (stored, never delivered), `received` for
 * every other event and when confirmation is off (`CONFIRM_MONEY_EVENTS`). The column is
 * plain text, so a new status needs no migration.
 */
export type WebhookEventStatus = 'received' | 'confirmed' | 'unconfirmed';

/** A stored webhook event, as the domain sees it. */
export interface WebhookEventRecord {
  /** The provider's `event_id`, the dedup key. */
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookEventStatus;
  /** When the gateway stored it, epoch milliseconds. */
  readonly receivedAt: number;
  /**
   * The body's `data.reference` when it is a string (`referenceOf` in
   * worker/relay/envelope.ts), else `null`: what the admin listing searches by.
   */
  readonly reference: string | null;
  /** The body exactly as received (UTF-8 JSON text): what is delivered onwards. */
  readonly rawBody: string;
  /** The last forced replay of an `unconfirmed` event, if there was one. */
  readonly forcedReplay?: ForcedReplay;
}

/** An admin's replay of an event the payment service did not confirm: who and when. */
export interface ForcedReplay {
  /** When it was forced, epoch milliseconds. */
  readonly at: number;
  /** The operator name sent with the replay, or `admin` when none was. */
  readonly by: string;
  /** The client address the admin request came from (`CF-Connecting-IP`), or `unknown`. */
  readonly from: string;
}

/** Input of {@link insertWebhookEvent}; the status starts as `received`. */
export type NewWebhookEvent = Omit<WebhookEventRecord, 'status' | 'forcedReplay'>;

interface WebhookEventRow {
  event_id: string;
  event_type: string;
  status: string;
  received_at: number;
  reference: string | null;
  raw_body: string;
  replay_forced_at?: number | null;
  replay_forced_by?: string | null;
  replay_forced_from?: string | null;
}

const STATUSES: ReadonlySet<string> = new Set<WebhookEventStatus>([
  'received',
  'confirmed',
  'unconfirmed',
]);

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `webhook_events`.
 * @throws {Error} when the row holds a status this code does not know (a bug or a newer writer).
 */
export function toWebhookEventRecord(row: WebhookEventRow): WebhookEventRecord {
  if (!STATUSES.has(row.status)) throw new Error(`unknown webhook event status ${row.status}`);
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as WebhookEventStatus,
    receivedAt: row.received_at,
    reference: row.reference,
    rawBody: row.raw_body,
    ...(row.replay_forced_at == null
      ? {}
      : {
          forcedReplay: {
            at: row.replay_forced_at,
            by: row.replay_forced_by ?? 'admin',
            from: row.replay_forced_from ?? 'unknown',
          },
        }),
  };
}

/**
 * The statement recording a forced replay on its event (the last one wins), for the same
 * `DB.batch()` as the replay's delivery rows.
 *
 * @param db - the D1 binding.
 * @param eventId - the event replayed.
 * @param forced - who, from where and when (epoch ms).
 */
export function recordForcedReplayStatement(
  db: D1Database,
  eventId: string,
  forced: ForcedReplay,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_events
       SET replay_forced_at = ?2, replay_forced_by = ?3, replay_forced_from = ?4
       WHERE event_id = ?1`,
    )
    .bind(eventId, forced.at, forced.by, forced.from);
}

/**
 * The insert-once statement of an event, for use inside a `DB.batch()` (the ingress
 * writes the event and its delivery rows in one transaction). Its `meta.changes` is 1
 * for a new event and 0 for a duplicate `event_id`.
 *
 * @param db - the D1 binding.
 * @param event - id, type, receive time (epoch ms), reference and exact body.
 * @param status - the status stored, decided at ingress by the confirmation of money
 *   events (worker/relay/confirm.ts). @default 'received'
 */
export function insertWebhookEventStatement(
  db: D1Database,
  event: NewWebhookEvent,
  status: WebhookEventStatus = 'received',
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_events (event_id, event_type, status, received_at, raw_body, reference)
       VALUES (?1, ?2, ?5, ?3, ?4, ?6)
       ON CONFLICT (event_id) DO NOTHING`,
    )
    .bind(event.eventId, event.eventType, event.receivedAt, event.rawBody, status, event.reference);
}

/**
 * Stores an event unless its `event_id` is already stored (the primary key decides, so
 * concurrent deliveries of one event store it once and exactly one of them sees `true`).
 * A duplicate leaves the first stored row untouched.
 *
 * @param db - the D1 binding.
 * @param event - id, type, receive time (epoch ms), reference and exact body.
 * @returns `true` when this call stored the event, `false` for a duplicate.
 * @throws whatever D1 throws; the caller must not acknowledge the event then.
 *
 * @example
 * ```ts
 * const stored = await insertWebhookEvent(env.DB, { eventId, eventType, receivedAt: Date.now(), reference, rawBody });
 * return jsonResponse({ status: 'success', event_id: eventId, duplicate: !stored });
 * ```
 */
export async function insertWebhookEvent(db: D1Database, event: NewWebhookEvent): Promise<boolean> {
  const result = await insertWebhookEventStatement(db, event).run();
  return result.meta.changes === 1;
}

/**
 * Reads one event.
 *
 * @param db - the D1 binding.
 * @param eventId - the provider's `event_id`.
 * @returns the record, or `undefined` when no such event is stored.
 */
export async function findWebhookEvent(
  db: D1Database,
  eventId: string,
): Promise<WebhookEventRecord | undefined> {
  const row = await db
    .prepare('SELECT * FROM webhook_events WHERE event_id = ?1')
    .bind(eventId)
    .first<WebhookEventRow>();
  return row === null ? undefined : toWebhookEventRecord(row);
}

/**
 * Deletes up to `limit` events received before `receivedBefore`, oldest first; their
 * deliveries and attempts go with them (ON DELETE CASCADE, migrations/0004).
 *
 * @param db - the D1 binding.
 * @param receivedBefore - epoch ms; events received strictly earlier are deleted.
 * @param limit - the most events deleted by this statement.
 * @returns how many events were deleted.
 */
export async function purgeWebhookEventsBefore(
  db: D1Database,
  receivedBefore: number,
  limit: number,
): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM webhook_events WHERE event_id IN (
         SELECT event_id FROM webhook_events WHERE received_at < ?1
         ORDER BY received_at, event_id LIMIT ?2)`,
    )
    .bind(receivedBefore, limit)
    .run();
  return result.meta.changes;
}
