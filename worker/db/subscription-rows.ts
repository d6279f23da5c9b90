/**
 * The `subscriptions` row (migrations/0003, 0009, 0010) as the domain sees it: the record
 * types, the SELECT that reads a subscription with its replaced secrets, and the row-to-record
 * mapper. Every time is epoch milliseconds.
 */

/** How fast and in which order the relay may deliver to one subscriber. */
export interface SubscriptionLimits {
  /** Most attempts a second (a decimal, 0.01 to 1000); `null` = no limit. */
  readonly maxPerSecond: number | null;
  /** Most attempts at the same time (1 to 100); `null` = the relay's default. */
  readonly maxInFlight: number | null;
  /** The events of one reference are delivered in the provider's order. */
  readonly ordered: boolean;
}

/**
 * Where a subscriber's health stands. The state is derived: `disabled` while the
 * subscription is not enabled, else `failing` while `failingSince` is set, else `healthy`.
 */
export interface SubscriptionHealth {
  /** When the unbroken run of failed attempts began, epoch ms; `null` after a success. */
  readonly failingSince: number | null;
  /** When it was last disabled, epoch ms; `null` while enabled. */
  readonly disabledAt: number | null;
  /** When the state last changed, epoch ms. */
  readonly changedAt: number;
  /** Why it last changed, in words (`null` for a subscription never changed since created). */
  readonly reason: string | null;
}

/** A stored subscription, as the domain sees it. */
export interface SubscriptionRecord extends SubscriptionLimits {
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
  readonly health: SubscriptionHealth;
}

/**
 * A subscription to store: the limits default to none (`ordered` false) and the health
 * starts `healthy` (or `disabled` when created disabled) at `createdAt`.
 */
export type NewSubscriptionRecord = Omit<SubscriptionRecord, keyof SubscriptionLimits | 'health'> &
  Partial<SubscriptionLimits>;

/** A secret a rotation replaced. */
interface PreviousSecret {
  /** The `whsec_` secret. */
  readonly secret: string;
  /** When it stops being signed with, epoch milliseconds. */
  readonly expiresAt: number;
}

// A subscription with its replaced secrets, newest first, as one JSON column.
export const SELECT_SUBSCRIPTIONS = `SELECT s.*, (
    SELECT json_group_array(json_object('secret', p.secret, 'expires_at', p.expires_at))
    FROM (SELECT secret, expires_at FROM subscription_previous_secrets
          WHERE subscription_id = s.id ORDER BY expires_at DESC, rowid DESC) AS p
  ) AS previous_secrets
  FROM subscriptions AS s`;

export interface SubscriptionRow {
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
  max_per_second: number | null;
  max_in_flight: number | null;
  ordered: number;
  failing_since: number | null;
  disabled_at: number | null;
  health_changed_at: number;
  health_reason: string | null;
}

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `subscriptions`.
 * @throws {Error} when `event_types` is not a JSON array of strings (a bug or a foreign writer).
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
    maxPerSecond: row.max_per_second,
    maxInFlight: row.max_in_flight,
    ordered: row.ordered === 1,
    health: {
      failingSince: row.failing_since,
      disabledAt: row.disabled_at,
      changedAt: row.health_changed_at,
      reason: row.health_reason,
    },
  };
}

/**
 * The health of a subscription just created: `healthy` since `createdAt`, or `disabled`
 * then when created disabled.
 *
 * @param record - the subscription being created.
 */
export function initialHealth(
  record: Pick<SubscriptionRecord, 'enabled' | 'createdAt'>,
): SubscriptionHealth {
  return {
    failingSince: null,
    disabledAt: record.enabled ? null : record.createdAt,
    changedAt: record.createdAt,
    reason: record.enabled ? null : 'created disabled',
  };
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
