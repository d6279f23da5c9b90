/**
 * A subscription as the admin API shows it: never a secret, times ISO 8601 UTC, the limits,
 * and the subscriber's health with its recent success rate.
 */
import type { SubscriptionRecord } from '../../db/subscriptions.ts';
import type { AttemptCounts } from '../../relay/outbox-health.ts';
import {
  type HealthState,
  healthState,
  recentAttempts,
  successRateView,
} from '../../relay/subscriber-health.ts';

/** A subscription as the admin API shows it (times ISO 8601 UTC); never a secret. */
export interface SubscriptionView {
  id: string;
  url: string;
  /** `null` = every event type. */
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  /** Most attempts a second; `null` = no limit. */
  max_per_second: number | null;
  /** Most attempts at the same time; `null` = the relay's default. */
  max_in_flight: number | null;
  ordered: boolean;
  health: HealthView;
  /** Until when the last replaced secret is still signed with; `null` when none is (earlier ones expire sooner). */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A subscriber's health as the admin API shows it. */
interface HealthView {
  state: HealthState;
  /** Why it last changed; `null` when it never did since created. */
  reason: string | null;
  /** When it last changed. */
  changed_at: string;
  /** When the current run of failed attempts began; `null` when the last attempt succeeded. */
  failing_since: string | null;
  disabled_at: string | null;
  /** Attempts over the last day and the share that succeeded. */
  success_rate: ReturnType<typeof successRateView>;
}

/**
 * The admin view of a record: no secret, and a previous secret's expiry only while
 * it is still in use.
 *
 * @param record - the stored subscription.
 * @param now - the current time, epoch milliseconds.
 * @param attempts - its attempts over the success-rate window; `undefined` = none.
 */
export function toSubscriptionView(
  record: SubscriptionRecord,
  now: number,
  attempts: AttemptCounts | undefined,
): SubscriptionView {
  // The replaced secrets are newest first: the first still in use lasts longest.
  const expiresAt = record.previousSecrets.find((replaced) => replaced.expiresAt > now)?.expiresAt;
  const { health } = record;
  return {
    id: record.id,
    url: record.url,
    event_types: record.eventTypes === null ? null : [...record.eventTypes],
    description: record.description,
    enabled: record.enabled,
    max_per_second: record.maxPerSecond,
    max_in_flight: record.maxInFlight,
    ordered: record.ordered,
    health: {
      state: healthState(record),
      reason: health.reason,
      changed_at: iso(health.changedAt),
      failing_since: health.failingSince === null ? null : iso(health.failingSince),
      disabled_at: health.disabledAt === null ? null : iso(health.disabledAt),
      success_rate: successRateView(attempts),
    },
    previous_secret_expires_at: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
  };
}

/**
 * The view of one subscription with its recent success rate (one call to its outbox).
 *
 * @param record - the stored subscription.
 * @param now - the current time, epoch milliseconds.
 */
export async function viewWithRate(
  env: Env,
  record: SubscriptionRecord,
  now: number,
): Promise<SubscriptionView> {
  const attempts = await recentAttempts(env, [record.id], now);
  return toSubscriptionView(record, now, attempts.get(record.id));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
