/**
 * D1 queries on `webhook_events` (migrations/0002, 0005, 0006, 0007, 0012, 0016): the ingress's
 * insert-once of an event keyed by `event_id`, and the read of one event. The body is stored
 * compressed when that is smaller (worker/db/compact-body.ts); what SQL reads inside it is
 * copied into columns at insert. Every time is epoch milliseconds; statements bind with `?N`;
 * `db` is always the D1 binding.
 */
import { compactText, expandText, type StoredValue } from './compact-body.ts';

/**
 * Where an event stands: `confirmed` when the upstream's verify endpoint agrees with a
 * money event, `awaiting_confirmation` while it cannot say yet (no record yet, a state not
 * final, or the upstream down: checked again on a schedule, not delivered meanwhile),
 * `unconfirmed` when it contradicted the event or the schedule ran out (stored, never
 * delivered unless forced), `received` for every other event and when confirmation is off
 * (`CONFIRM_MONEY_EVENTS`). The column is plain text, so a new status needs no migration.
 */
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

/** Every {@link WebhookEventStatus}: the one list the type, the filters and the row check read. */
export const WEBHOOK_EVENT_STATUSES = Object.freeze([
  'received',
  'awaiting_confirmation',
  'confirmed',
  'unconfirmed',
] as const);

/**
 * Whether an event reached its subscribers, from its deliveries (the first that holds):
 * `failed` (a delivery failed for good: dead-lettered, or answered 410), `failing` (a
 * delivery is pending after a failed attempt), `pending` (a delivery is pending, not attempted
 * yet or re-queued after a success), `delivered` (every delivery delivered); with no delivery,
 * `held` (not fanned out: `awaiting_confirmation` or `unconfirmed`) or `no_subscriber`.
 * Kept on the event by triggers on `deliveries` (migrations/0012), so every writer updates it.
 */
export type EventOutcome = (typeof EVENT_OUTCOMES)[number];

/** Every {@link EventOutcome}, from the worst to the best: the filter and the row check read it. */
export const EVENT_OUTCOMES = Object.freeze([
  'failed',
  'failing',
  'pending',
  'held',
  'delivered',
  'no_subscriber',
] as const);

/** Where the confirmation of a money event stands (migrations/0007). */
export interface ConfirmationState {
  /** The last check's finding in words (`status processing`), `null` when never checked. */
  readonly reason: string | null;
  /** Checks made so far (0 when never checked). */
  readonly checks: number;
  /** When the last check was made, epoch ms, `null` before any. */
  readonly checkedAt: number | null;
  /** When the next check is due, epoch ms; `null` unless `awaiting_confirmation`. */
  readonly nextCheckAt: number | null;
}

/** The confirmation of an event never checked. */
export const UNCHECKED: ConfirmationState = Object.freeze({
  reason: null,
  checks: 0,
  checkedAt: null,
  nextCheckAt: null,
});

/** A stored webhook event, as the domain sees it. */
export interface WebhookEventRecord {
  /** The provider's `event_id`, the dedup key. */
  readonly eventId: string;
  readonly eventType: string;
  readonly status: WebhookEventStatus;
  /** Whether it reached its subscribers, from its deliveries (migrations/0012). */
  readonly outcome: EventOutcome;
  /** When the gateway stored it, epoch milliseconds. */
  readonly receivedAt: number;
  /**
   * The body's `data.reference` when it is a string (`referenceOf` in
   * worker/relay/envelope.ts), else `null`: what the admin listing searches by.
   */
  readonly reference: string | null;
  /** The body exactly as received (UTF-8 JSON text): what is delivered onwards. */
  readonly rawBody: string;
  /** Its confirmation against the payment service; absent when it was never checked. */
  readonly confirmation?: ConfirmationState;
}

/** Input of {@link insertWebhookEvent}; the status starts as `received`, the outcome follows its deliveries. */
export type NewWebhookEvent = Omit<WebhookEventRecord, 'status' | 'outcome' | 'confirmation'>;

interface WebhookEventRow<Body = string> {
  event_id: string;
  event_type: string;
  status: string;
  outcome: string;
  received_at: number;
  reference: string | null;
  raw_body: Body;
  confirmation_reason?: string | null;
  confirmation_checks?: number | null;
  confirmation_checked_at?: number | null;
  next_check_at?: number | null;
}

const STATUSES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_STATUSES);
const OUTCOMES: ReadonlySet<string> = new Set(EVENT_OUTCOMES);

/**
 * The outcome of a row, checked.
 *
 * @param outcome - the `outcome` column.
 * @throws {Error} when it is not an {@link EventOutcome} (a bug or a newer writer).
 */
function toEventOutcome(outcome: string): EventOutcome {
  if (!OUTCOMES.has(outcome)) throw new Error(`unknown webhook event outcome ${outcome}`);
  return outcome as EventOutcome;
}

/** The columns of `webhook_events` every read of an event maps the same way. */
export type WebhookEventFieldsRow = Pick<
  WebhookEventRow,
  'event_id' | 'event_type' | 'status' | 'outcome' | 'received_at' | 'reference'
>;

/** What every read of an event shows of it, the body and the confirmation aside. */
type WebhookEventFields = Omit<WebhookEventRecord, 'rawBody' | 'confirmation'>;

/**
 * Maps the columns an event's record and its listing summary share (worker/db/admin-queries.ts):
 * each read adds its own body (the listing reads it for some types only) and the record its
 * confirmation.
 *
 * @param row - a row of `webhook_events`, or of a query selecting these columns from it.
 * @returns id, type, status, outcome, receive time (epoch ms) and reference. The status is
 *   passed on as stored, not checked: {@link toWebhookEventRecord} checks it, the listing does not.
 * @throws {Error} when the row holds an outcome this code does not know (a bug or a newer writer).
 */
export function toWebhookEventFields(row: WebhookEventFieldsRow): WebhookEventFields {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as WebhookEventStatus,
    outcome: toEventOutcome(row.outcome),
    receivedAt: row.received_at,
    reference: row.reference,
  };
}

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `webhook_events`, its body already expanded to text.
 * @throws {Error} when the row holds a status or an outcome this code does not know (a bug or a
 *   newer writer).
 *
 * @internal Exported for the tests, which call it directly.
 */
export function toWebhookEventRecord(row: WebhookEventRow): WebhookEventRecord {
  if (!STATUSES.has(row.status)) throw new Error(`unknown webhook event status ${row.status}`);
  return {
    ...toWebhookEventFields(row),
    rawBody: row.raw_body,
    ...(!row.confirmation_checks
      ? {}
      : {
          confirmation: {
            reason: row.confirmation_reason ?? null,
            checks: row.confirmation_checks,
            checkedAt: row.confirmation_checked_at ?? null,
            nextCheckAt: row.next_check_at ?? null,
          },
        }),
  };
}

/**
 * The insert-once statement of an event, for use inside a `DB.batch()` (the ingress
 * writes the event and its delivery rows in one transaction). Its `meta.changes` is 1
 * for a new event and 0 for a duplicate `event_id` (no trigger writes on this insert: its
 * outcome, `held` for an event not fanned out, else `no_subscriber` until its deliveries are
 * written, is part of the insert). The body is stored compacted ({@link compactText}), with
 * what SQL reads inside it copied into columns (see {@link bodyTimestampDaySql} and
 * {@link bodySubscriptionIdSql}).
 *
 * @param event - id, type, receive time (epoch ms), reference and exact body.
 * @param status - the status stored, decided at ingress by the confirmation of money
 *   events (worker/relay/confirm.ts). @default 'received'
 * @param confirmation - the ingress's check: reason, count, time and next check (epoch ms).
 *   @default UNCHECKED
 * @returns the statement, once the body is compressed.
 */
export async function insertWebhookEventStatement(
  db: D1Database,
  event: NewWebhookEvent,
  status: WebhookEventStatus = 'received',
  confirmation: ConfirmationState = UNCHECKED,
): Promise<D1PreparedStatement> {
  const fields = bodyFields(event.rawBody);
  return db
    .prepare(
      `INSERT INTO webhook_events (event_id, event_type, status, received_at, raw_body, reference,
         confirmation_reason, confirmation_checks, confirmation_checked_at, next_check_at, outcome,
         timestamp_julian_day, data_subscription_id)
       VALUES (?1, ?2, ?5, ?3, ?4, ?6, ?7, ?8, ?9, ?10,
         CASE WHEN ?5 IN ('awaiting_confirmation', 'unconfirmed') THEN 'held' ELSE 'no_subscriber' END,
         julianday(?11), ?12)
       ON CONFLICT (event_id) DO NOTHING`,
    )
    .bind(
      event.eventId,
      event.eventType,
      event.receivedAt,
      await compactText(event.rawBody),
      status,
      event.reference,
      confirmation.reason,
      confirmation.checks,
      confirmation.checkedAt,
      confirmation.nextCheckAt,
      fields.timestamp,
      fields.subscriptionId,
    );
}

/** A JSON value as SQLite's `json_extract` returns it (objects and arrays as JSON text). */
type SqlJsonValue = string | number | null;

/**
 * The body's `timestamp` and `data.subscription_id` as `json_extract` would return them, so the
 * columns hold exactly what SQL read inside a text body; `null` for each when it is not JSON.
 */
function bodyFields(rawBody: string): { timestamp: SqlJsonValue; subscriptionId: SqlJsonValue } {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return { timestamp: null, subscriptionId: null };
  }
  const record = isObject(body) ? body : {};
  const data = isObject(record.data) ? record.data : {};
  return {
    timestamp: asSqlJson(record.timestamp),
    subscriptionId: asSqlJson(data.subscription_id),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asSqlJson(value: unknown): SqlJsonValue {
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/**
 * SQL of the Julian day of an event's `timestamp` (ISO 8601 in the body; NULL when it is not a
 * date): read from the body of a row stored as text (every row written before the column
 * existed), else from `timestamp_julian_day`, which the insert fills from the same body.
 *
 * @param alias - the `webhook_events` alias of the query (an identifier of the code, never input).
 */
export function bodyTimestampDaySql(alias: string): string {
  return `CASE WHEN typeof(${alias}.raw_body) = 'text'
    THEN julianday(json_extract(${alias}.raw_body, '$.timestamp'))
    ELSE ${alias}.timestamp_julian_day END`;
}

/**
 * SQL of an event's `data.subscription_id` (the subscription one of the relay's own events is
 * about): from the body of a row stored as text, else from `data_subscription_id`.
 *
 * @param alias - the `webhook_events` alias of the query (an identifier of the code, never input).
 */
export function bodySubscriptionIdSql(alias: string): string {
  return `CASE WHEN typeof(${alias}.raw_body) = 'text'
    THEN json_extract(${alias}.raw_body, '$.data.subscription_id')
    ELSE ${alias}.data_subscription_id END`;
}

/**
 * Stores an event unless its `event_id` is already stored (the primary key decides, so
 * concurrent deliveries of one event store it once and exactly one of them sees `true`).
 * A duplicate leaves the first stored row untouched.
 *
 * @param event - id, type, receive time (epoch ms), reference and exact body.
 * @returns `true` when this call stored the event, `false` for a duplicate.
 * @throws whatever D1 throws; the caller must not acknowledge the event then.
 *
 * @example
 * ```ts
 * const stored = await insertWebhookEvent(env.DB, { eventId, eventType, receivedAt: Date.now(), reference, rawBody });
 * return jsonResponse({ status: 'success', event_id: eventId, duplicate: !stored });
 * ```
 *
 * @internal Exported for the tests, which call it directly.
 */
export async function insertWebhookEvent(db: D1Database, event: NewWebhookEvent): Promise<boolean> {
  const result = await (await insertWebhookEventStatement(db, event)).run();
  return result.meta.changes === 1;
}

/**
 * Reads one event.
 *
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
    .first<WebhookEventRow<StoredValue>>();
  if (row === null) return undefined;
  return toWebhookEventRecord({ ...row, raw_body: await expandText(row.raw_body) });
}

/**
 * Deletes up to `limit` events received before `receivedBefore`, oldest first; their
 * deliveries and attempts go with them (ON DELETE CASCADE, migrations/0004).
 *
 * @param receivedBefore - epoch ms; events received strictly earlier are deleted.
 * @param limit - the most events deleted by this statement.
 * @returns how many events were deleted.
 */
export async function purgeWebhookEventsBefore(
  db: D1Database,
  receivedBefore: number,
  limit: number,
): Promise<number> {
  // Counted by RETURNING: `meta.changes` also counts the rows the cascade deletes.
  const { results } = await db
    .prepare(
      `DELETE FROM webhook_events WHERE event_id IN (
         SELECT event_id FROM webhook_events WHERE received_at < ?1
         ORDER BY received_at, event_id LIMIT ?2)
       RETURNING event_id`,
    )
    .bind(receivedBefore, limit)
    .all<{ event_id: string }>();
  return results.length;
}
