/**
 * Subscriber health: each recorded attempt moves its subscription between `healthy` and
 * `failing` and counts towards the recent success rate; the relay disables a subscription
 * whose subscriber answers 410 Gone, or whose every attempt failed for
 * `SUBSCRIPTION_DISABLE_AFTER_HOURS`. The rules are in docs/gateway.md, "Webhook relay" (its
 * Subscriber health paragraphs).
 */
import { loadSettings } from '../config.ts';
import { findDelivery } from '../db/deliveries.ts';
import type { EventShard } from '../db/event-shards.ts';
import { forgetSubscriptions } from '../db/subscription-cache.ts';
import { disableForHealth, moveHealth } from '../db/subscription-health.ts';
import type { SubscriptionRecord } from '../db/subscriptions.ts';
import { logEvent } from '../http/log.ts';
import { subscriberHost } from './operational-event-schemas.ts';
import { emitOperationalEvent } from './operational-events.ts';
import { type AttemptCounts, SUCCESS_RATE_WINDOW_HOURS } from './outbox-health.ts';
import type { OutboxState, SubscriptionCopy } from './outbox-subscription.ts';

/** Milliseconds in an hour. */
const HOUR_MS = 3_600_000;

/** A subscription's health state. */
export type HealthState = (typeof HEALTH_STATES)[number];

/** Every {@link HealthState}, from best to worst. */
export const HEALTH_STATES = Object.freeze(['healthy', 'failing', 'disabled'] as const);

/** What an attempt got, as the health needs it. */
interface AttemptResult {
  /** The subscriber's HTTP status; `null` when no response came. */
  readonly status: number | null;
  /** Why no response came (network error, timeout, refused URL); `null` otherwise. */
  readonly error: string | null;
  /** When the attempt settled, epoch ms. */
  readonly at: number;
}

/**
 * The health state of a subscription: `disabled` while it is not enabled, else `failing`
 * while its last attempts all failed, else `healthy`.
 *
 * @param record - the stored subscription.
 */
export function healthState(record: SubscriptionRecord): HealthState {
  if (!record.enabled) return 'disabled';
  return record.health.failingSince === null ? 'healthy' : 'failing';
}

/**
 * Records a delivery attempt with its health side: the attempt's own record (`record`, the
 * statements of `deliveryAttemptStatements`, one round trip to the delivery's shard), its
 * count in the outbox's tally, and the subscription's move between `healthy` and `failing`,
 * written to `DB` only when this attempt changes it (the outbox's copy of the subscription
 * says so; worker/relay/outbox-subscription.ts). Then disables the subscription on a 410 or
 * when its unbroken run of failures has lasted `SUBSCRIPTION_DISABLE_AFTER_HOURS` (0 turns
 * that rule off); a disable is logged and announced as `subscription.disabled`.
 *
 * @param env - bindings (`DB`) and settings (`SUBSCRIPTION_DISABLE_AFTER_HOURS`).
 * @param delivery - the delivery the attempt belongs to, its shard and subscription.
 * @param attempt - its status or error and its time.
 * @param record - the statements recording the attempt and the delivery's new state (on the
 *   delivery's shard).
 * @param outbox - the outbox's copy of its subscription and its attempt counts.
 * @throws whatever D1 throws (the caller retries the attempt: the record lands whole or not
 *   at all; a move that failed after it is made by the next attempt that finds it missing).
 */
export async function recordAttemptWithHealth(
  env: Env,
  delivery: AttemptDelivery,
  attempt: AttemptResult,
  record: readonly D1PreparedStatement[],
  outbox: OutboxState,
): Promise<void> {
  const { deliveryId, shard } = delivery;
  if (record.length > 0) await shard.db.batch([...record]);
  const subscriptionId =
    delivery.subscriptionId ?? (await findDelivery(shard.db, deliveryId))?.subscriptionId;
  if (subscriptionId === undefined) return;
  const succeeded = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
  outbox.tally.count(succeeded, attempt.at);
  const subscription = await outbox.subscription.find(env, subscriptionId);
  if (subscription === undefined || !subscription.enabled) return;
  let since = subscription.health.failingSince;
  if (succeeded === (since !== null)) {
    // The state changes: healthy -> failing, or failing -> healthy.
    const when = new Date(attempt.at).toISOString();
    const reason = succeeded
      ? `delivered (HTTP ${attempt.status}) at ${when}`
      : `${failureOf(attempt)} at ${when}`;
    const moved = await moveHealth(env.DB, subscriptionId, { succeeded, at: attempt.at, reason });
    outbox.subscription.forget();
    if (moved === undefined || !moved.enabled) return;
    since = moved.failingSince;
  }
  if (succeeded) return;
  const target = { subscriptionId, copy: outbox.subscription };
  const when = new Date(attempt.at).toISOString();
  if (attempt.status === 410) {
    const reason = `410 Gone from the subscriber at ${when}`;
    await disable(env, target, { at: attempt.at, reason });
    return;
  }
  const hours = disableAfterHours(env);
  if (hours === 0 || since === null || attempt.at - since < hours * HOUR_MS) return;
  const reason = `every attempt failed for ${hours} h since ${new Date(since).toISOString()}`;
  await disable(env, target, { at: attempt.at, reason, failingSince: since });
}

/** The delivery an attempt belongs to, where it is stored and its subscription. */
export interface AttemptDelivery {
  readonly deliveryId: string;
  /** The event shard holding it (worker/db/event-shards.ts). */
  readonly shard: EventShard;
  /** Its subscription, when the caller knows it (read from the shard otherwise). */
  readonly subscriptionId?: string | undefined;
}

/**
 * The attempts of each subscription over the success-rate window, asked of their outboxes
 * (one call each, in parallel), which count them as they are recorded.
 *
 * @param env - the `SUBSCRIBER_OUTBOX` binding.
 * @param ids - the subscriptions (a deployment has a handful).
 * @param now - the end of the window, epoch milliseconds.
 * @returns counts by subscription id; a subscription without attempts counts zero.
 * @throws whatever a Durable Object call throws.
 */
export async function recentAttempts(
  env: Env,
  ids: readonly string[],
  now: number,
): Promise<Map<string, AttemptCounts>> {
  const counts = await Promise.all(
    ids.map((id) => env.SUBSCRIBER_OUTBOX.getByName(id).attemptCounts(now)),
  );
  return new Map(ids.map((id, index) => [id, counts[index] ?? { succeeded: 0, failed: 0 }]));
}

/**
 * The recent success rate as the admin API shows it: attempts over the last
 * {@link SUCCESS_RATE_WINDOW_HOURS} hours and the share that succeeded (`null` without
 * attempts), rounded to 4 decimals.
 *
 * @param counts - the subscription's counts; `undefined` = no attempts.
 */
export function successRateView(counts: AttemptCounts | undefined) {
  const succeeded = counts?.succeeded ?? 0;
  const failed = counts?.failed ?? 0;
  const attempts = succeeded + failed;
  return {
    window_hours: SUCCESS_RATE_WINDOW_HOURS,
    attempts,
    succeeded,
    failed,
    rate: attempts === 0 ? null : Math.round((succeeded / attempts) * 10_000) / 10_000,
  };
}

/** Why an attempt failed, in a few words. */
function failureOf(attempt: AttemptResult): string {
  if (attempt.status !== null) return `HTTP ${attempt.status} from the subscriber`;
  // The error is the relay's own text (timeout, connection, refused URL), never a body.
  return `no response (${(attempt.error ?? 'unknown error').slice(0, 200)})`;
}

// Unreadable settings never reach here (the prepare step skips every delivery then); the
// default guards the type.
function disableAfterHours(env: Env): number {
  const loaded = loadSettings(env);
  return loaded.ok ? loaded.settings.subscriptionDisableAfterHours : 0;
}

/** Disables the subscription (once), logs it and announces it. */
async function disable(
  env: Env,
  { subscriptionId, copy }: { subscriptionId: string; copy: SubscriptionCopy },
  change: { at: number; reason: string; failingSince?: number },
): Promise<void> {
  const disabled = await disableForHealth(env.DB, subscriptionId, change);
  // The outbox's copy and the fan-out's: neither may go on with the subscription enabled.
  copy.forget();
  forgetSubscriptions();
  if (disabled === undefined) return;
  await announceDisabled(env, { subscriptionId, url: disabled.url, ...change });
}

/** A subscription just disabled, as {@link announceDisabled} tells it. */
interface DisabledSubscription {
  readonly subscriptionId: string;
  /** Its URL: only the host goes into the event, never the path or query. */
  readonly url: string;
  /** When, epoch ms. */
  readonly at: number;
  /** Why, in words. */
  readonly reason: string;
}

/**
 * Logs a subscription just disabled and emits `subscription.disabled` to the subscriptions
 * that ask for it (never to the one disabled). A failure to emit is logged, not thrown: the
 * disable itself is recorded, and throwing would only repeat the attempt being settled or
 * answer an operator 500 for a change that was made.
 *
 * @param env - bindings (`DB`, `DELIVERIES`).
 * @param disabled - which subscription, its URL, when and why.
 */
export async function announceDisabled(env: Env, disabled: DisabledSubscription): Promise<void> {
  logEvent('warn', 'subscription_disabled', {
    subscription_id: disabled.subscriptionId,
    reason: disabled.reason,
  });
  try {
    await emitOperationalEvent(env, {
      type: 'subscription.disabled',
      data: {
        subscription_id: disabled.subscriptionId,
        host: subscriberHost(disabled.url),
        reason: disabled.reason,
        disabled_at: new Date(disabled.at).toISOString(),
      },
      now: disabled.at,
    });
  } catch (error) {
    logEvent('error', 'operational_event_failed', {
      event_type: 'subscription.disabled',
      subscription_id: disabled.subscriptionId,
      error_message: error instanceof Error ? error.message : String(error),
    });
  }
}
