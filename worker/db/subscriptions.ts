/**
 * D1 queries on `subscriptions` (migrations/0003, limits and health columns of 0010) and the
 * secrets their rotations replaced
 * (`subscription_previous_secrets`, migrations/0009): the relay's webhook subscriptions,
 * managed through the admin API (`/admin/subscriptions`). Every time is epoch
 * milliseconds; statements bind with `?N`; `db` is always the D1 binding.
 */

import {
  initialHealth,
  type NewSubscriptionRecord,
  SELECT_SUBSCRIPTIONS,
  type SubscriptionLimits,
  type SubscriptionRecord,
  type SubscriptionRow,
  toSubscriptionRecord,
} from './subscription-rows.ts';

export {
  initialHealth,
  type NewSubscriptionRecord,
  type SubscriptionLimits,
  type SubscriptionRecord,
} from './subscription-rows.ts';

/**
 * What an update may change (absent fields are left as they are). Changing `enabled` is an
 * operator's act: the health records it ("disabled by an operator", "re-enabled by an
 * operator") when the value actually changes.
 */
export type SubscriptionChanges = Partial<
  Pick<
    SubscriptionRecord,
    'url' | 'eventTypes' | 'description' | 'enabled' | keyof SubscriptionLimits
  >
>;

/** Health reason recorded when an operator disables a subscription. */
export const OPERATOR_DISABLED_REASON = 'disabled by an operator';
/** Health reason recorded when an operator enables a disabled subscription again. */
const OPERATOR_ENABLED_REASON = 're-enabled by an operator';

/**
 * Stores a new subscription.
 *
 * @param record - the whole record (id, secret and times chosen by the caller); limits
 *   absent are none, the health is {@link initialHealth}.
 * @throws whatever D1 throws (a duplicate id included).
 */
export async function insertSubscription(
  db: D1Database,
  record: NewSubscriptionRecord,
): Promise<void> {
  const health = initialHealth(record);
  const insert = db
    .prepare(
      `INSERT INTO subscriptions (id, url, event_types, description, enabled, secret,
         created_at, updated_at, max_per_second, max_in_flight, ordered, disabled_at,
         health_changed_at, health_reason)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)`,
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
      record.maxPerSecond ?? null,
      record.maxInFlight ?? null,
      record.ordered === true ? 1 : 0,
      health.disabledAt,
      health.changedAt,
      health.reason,
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

/** What {@link updateSubscription} changed. */
export interface SubscriptionUpdate {
  /** The record after the update. */
  readonly record: SubscriptionRecord;
  /** The record as it was just before, read in the same transaction. */
  readonly before: SubscriptionRecord;
}

/**
 * Changes the given fields in one statement (so concurrent updates of different fields
 * never undo each other) and sets `updated_at`. Never touches the secrets. When `enabled`
 * changes value, the health records it: disabling sets `disabled_at` and the reason
 * {@link OPERATOR_DISABLED_REASON}; enabling clears `disabled_at` and `failing_since`
 * (the subscriber starts `healthy` again).
 *
 * @param id - the subscription id.
 * @param changes - the fields to set; absent ones are kept.
 * @param now - the update time, epoch milliseconds.
 * @returns the record before and after, read in the same transaction, or `undefined` when
 *   there is no such subscription.
 */
export async function updateSubscription(
  db: D1Database,
  id: string,
  changes: SubscriptionChanges,
  now: number,
): Promise<SubscriptionUpdate | undefined> {
  const values: unknown[] = [id, now];
  // Column names come from this fixed list, never from the request; values are bound.
  const bind = (value: unknown) => {
    values.push(value);
    return `?${values.length}`;
  };
  const assignments = ['updated_at = ?2'];
  const set = (column: string, value: unknown) => assignments.push(`${column} = ${bind(value)}`);
  if (changes.url !== undefined) set('url', changes.url);
  if (changes.eventTypes !== undefined) {
    set('event_types', changes.eventTypes === null ? null : JSON.stringify(changes.eventTypes));
  }
  if (changes.description !== undefined) set('description', changes.description);
  if (changes.maxPerSecond !== undefined) set('max_per_second', changes.maxPerSecond);
  if (changes.maxInFlight !== undefined) set('max_in_flight', changes.maxInFlight);
  if (changes.ordered !== undefined) set('ordered', changes.ordered ? 1 : 0);
  if (changes.enabled !== undefined) {
    // SQLite evaluates every SET term against the row as it was, so `enabled <> new` says
    // whether this update changes the state; only then is the health's change recorded.
    const enabled = changes.enabled ? 1 : 0;
    const changed = `enabled <> ${enabled}`;
    const reason = bind(changes.enabled ? OPERATOR_ENABLED_REASON : OPERATOR_DISABLED_REASON);
    assignments.push(
      `enabled = ${enabled}`,
      `health_reason = CASE WHEN ${changed} THEN ${reason} ELSE health_reason END`,
      `health_changed_at = CASE WHEN ${changed} THEN ?2 ELSE health_changed_at END`,
      `disabled_at = CASE WHEN ${changed} THEN ${enabled === 1 ? 'NULL' : '?2'} ELSE disabled_at END`,
    );
    // Enabled again, the subscriber starts healthy: its old failures led to the disable.
    if (enabled === 1) {
      assignments.push(`failing_since = CASE WHEN ${changed} THEN NULL ELSE failing_since END`);
    }
  }
  const select = `${SELECT_SUBSCRIPTIONS} WHERE s.id = ?1`;
  const [previous, , after] = await db.batch<SubscriptionRow>([
    db.prepare(select).bind(id),
    db.prepare(`UPDATE subscriptions SET ${assignments.join(', ')} WHERE id = ?1`).bind(...values),
    db.prepare(select).bind(id),
  ]);
  const beforeRow = previous?.results[0];
  const afterRow = after?.results[0];
  if (beforeRow === undefined || afterRow === undefined) return undefined;
  return { record: toSubscriptionRecord(afterRow), before: toSubscriptionRecord(beforeRow) };
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
