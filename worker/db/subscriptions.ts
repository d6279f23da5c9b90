/**
 * D1 queries on `subscriptions` (migrations/0003) and the secrets their rotations replaced
 * (`subscription_previous_secrets`, migrations/0009): the relay's webhook subscriptions,
 * managed through the admin API (`/admin/subscriptions`). Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */

/** A stored subscription, as the domain sees it. */
export interface SubscriptionRecord {
  /** `sub_<uuid>`. */
  readonly id: string;
  /** The normalized delivery URL (checked by `checkSubscriptionUrl`). */
  readonly url: string;
  /** The event types delivered; `null` = every event type. */
  readonly eventTypes: readonly string[] | null;
  readonly description: string | null;
  readonly enabled: boolean;
  /** The current `whsec_` signing secret. */
  readonly secret: string;
  /**
   * The secrets earlier rotations replaced, newest first, each still signed with until its
   * own expiry (expired ones may linger until the next rotation deletes them).
   */
  readonly previousSecrets: readonly PreviousSecret[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A secret a rotation replaced. */
interface PreviousSecret {
  /** The `whsec_` secret. */
  readonly secret: string;
  /** When it stops being signed with, epoch milliseconds. */
  readonly expiresAt: number;
}

/** What an update may change (absent fields are left as they are). */
export type SubscriptionChanges = Partial<
  Pick<SubscriptionRecord, 'url' | 'eventTypes' | 'description' | 'enabled'>
>;

// A subscription with its replaced secrets, newest first, as one JSON column.
const SELECT_SUBSCRIPTIONS = `SELECT s.*, (
    SELECT json_group_array(json_object('secret', p.secret, 'expires_at', p.expires_at))
    FROM (SELECT secret, expires_at FROM subscription_previous_secrets
          WHERE subscription_id = s.id ORDER BY expires_at DESC, rowid DESC) AS p
  ) AS previous_secrets
  FROM subscriptions AS s`;

interface SubscriptionRow {
  id: string;
  url: string;
  event_types: string | null;
  description: string | null;
  enabled: number;
  secret: string;
  /** JSON array of `{ secret, expires_at }`, newest first (from {@link SELECT_SUBSCRIPTIONS}). */
  previous_secrets: string;
  created_at: number;
  updated_at: number;
}

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `subscriptions`.
 * @throws {Error} when `event_types` is not a JSON array of strings (a bug or a foreign writer).
 *
 * @internal Exported for the tests, which call it directly.
 */
export function toSubscriptionRecord(row: SubscriptionRow): SubscriptionRecord {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types === null ? null : parseEventTypes(row.id, row.event_types),
    description: row.description,
    enabled: row.enabled === 1,
    secret: row.secret,
    previousSecrets: parsePreviousSecrets(row.previous_secrets),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Stores a new subscription.
 *
 * @param record - the whole record (id, secret and times chosen by the caller).
 * @throws whatever D1 throws (a duplicate id included).
 */
export async function insertSubscription(
  db: D1Database,
  record: SubscriptionRecord,
): Promise<void> {
  const insert = db
    .prepare(
      `INSERT INTO subscriptions (id, url, event_types, description, enabled, secret,
         created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
    )
    .bind(
      record.id,
      record.url,
      record.eventTypes === null ? null : JSON.stringify(record.eventTypes),
      record.description,
      record.enabled ? 1 : 0,
      record.secret,
      record.createdAt,
      record.updatedAt,
    );
  const previous = record.previousSecrets.map((replaced) =>
    db
      .prepare(
        `INSERT INTO subscription_previous_secrets (subscription_id, secret, expires_at)
         VALUES (?1, ?2, ?3)`,
      )
      .bind(record.id, replaced.secret, replaced.expiresAt),
  );
  await db.batch([insert, ...previous]);
}

/**
 * Reads one subscription.
 *
 * @param id - the subscription id.
 * @returns the record, or `undefined` when there is none.
 */
export async function findSubscription(
  db: D1Database,
  id: string,
): Promise<SubscriptionRecord | undefined> {
  const row = await db
    .prepare(`${SELECT_SUBSCRIPTIONS} WHERE s.id = ?1`)
    .bind(id)
    .first<SubscriptionRow>();
  return row === null ? undefined : toSubscriptionRecord(row);
}

/**
 * Every subscription, newest first (ties broken by id, descending). Subscriptions are
 * a handful per deployment, so the list is not paginated.
 */
export async function listSubscriptions(db: D1Database): Promise<SubscriptionRecord[]> {
  const { results } = await db
    .prepare(`${SELECT_SUBSCRIPTIONS} ORDER BY s.created_at DESC, s.id DESC`)
    .all<SubscriptionRow>();
  return results.map(toSubscriptionRecord);
}

/**
 * Changes the given fields in one statement (so concurrent updates of different fields
 * never undo each other) and sets `updated_at`. Never touches the secrets.
 *
 * @param id - the subscription id.
 * @param changes - the fields to set; absent ones are kept.
 * @param now - the update time, epoch milliseconds.
 * @returns the updated record, or `undefined` when there is no such subscription.
 */
export async function updateSubscription(
  db: D1Database,
  id: string,
  changes: SubscriptionChanges,
  now: number,
): Promise<SubscriptionRecord | undefined> {
  const values: unknown[] = [id, now];
  // Column names come from this fixed list, never from the request; values are bound.
  const set = (column: string, value: unknown) => {
    values.push(value);
    return `${column} = ?${values.length}`;
  };
  const assignments = ['updated_at = ?2'];
  if (changes.url !== undefined) assignments.push(set('url', changes.url));
  if (changes.eventTypes !== undefined) {
    const eventTypes = changes.eventTypes === null ? null : JSON.stringify(changes.eventTypes);
    assignments.push(set('event_types', eventTypes));
  }
  if (changes.description !== undefined) assignments.push(set('description', changes.description));
  if (changes.enabled !== undefined) assignments.push(set('enabled', changes.enabled ? 1 : 0));
  const update = db
    .prepare(`UPDATE subscriptions SET ${assignments.join(', ')} WHERE id = ?1`)
    .bind(...values);
  return updatedRecord(db, id, [update]);
}

/**
 * Deletes a subscription.
 *
 * @param id - the subscription id.
 * @returns `true` when a subscription was deleted, `false` when there was none.
 */
export async function deleteSubscription(db: D1Database, id: string): Promise<boolean> {
  // RETURNING, not `meta.changes`: the count includes the replaced secrets deleted with it.
  const deleted = await db
    .prepare('DELETE FROM subscriptions WHERE id = ?1 RETURNING id')
    .bind(id)
    .first<{ id: string }>();
  return deleted !== null;
}

/** Input of {@link rotateSubscriptionSecret}. */
interface SecretRotation {
  /** The new `whsec_` secret. */
  readonly secret: string;
  /** The rotation time, epoch milliseconds. */
  readonly now: number;
  /** How long the replaced secret stays in use, in milliseconds. */
  readonly previousValidForMs: number;
}

/**
 * Replaces the secret in one transaction: the current one joins the replaced secrets,
 * valid until `now + previousValidForMs`; every replaced secret still in its grace period
 * is kept (a subscriber may still verify with any of them mid-rollout), and the expired
 * ones are deleted.
 *
 * @param id - the subscription id.
 * @param rotation - the new secret, the time and the grace period.
 * @returns the updated record, or `undefined` when there is no such subscription.
 */
export async function rotateSubscriptionSecret(
  db: D1Database,
  id: string,
  rotation: SecretRotation,
): Promise<SubscriptionRecord | undefined> {
  const { secret, now, previousValidForMs } = rotation;
  return updatedRecord(db, id, [
    db
      .prepare(
        `INSERT INTO subscription_previous_secrets (subscription_id, secret, expires_at)
         SELECT id, secret, ?2 FROM subscriptions WHERE id = ?1`,
      )
      .bind(id, now + previousValidForMs),
    db
      .prepare(
        'DELETE FROM subscription_previous_secrets WHERE subscription_id = ?1 AND expires_at <= ?2',
      )
      .bind(id, now),
    db
      .prepare('UPDATE subscriptions SET secret = ?2, updated_at = ?3 WHERE id = ?1')
      .bind(id, secret, now),
  ]);
}

// Runs `writes` and reads the subscription back in one transaction; `undefined` when absent.
async function updatedRecord(
  db: D1Database,
  id: string,
  writes: readonly D1PreparedStatement[],
): Promise<SubscriptionRecord | undefined> {
  const read = db.prepare(`${SELECT_SUBSCRIPTIONS} WHERE s.id = ?1`).bind(id);
  const results = await db.batch<SubscriptionRow>([...writes, read]);
  const row = results.at(-1)?.results[0];
  return row === undefined ? undefined : toSubscriptionRecord(row);
}

function parsePreviousSecrets(text: string): PreviousSecret[] {
  const value = JSON.parse(text) as Array<{ secret: string; expires_at: number }>;
  return value.map((entry) => ({ secret: entry.secret, expiresAt: entry.expires_at }));
}

function parseEventTypes(id: string, text: string): string[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error(`subscription ${id}: event_types is not a JSON array of strings`);
  }
  return value;
}
