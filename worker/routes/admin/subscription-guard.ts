/**
 * The refusals of the admin API's retry and replay when their target subscription is
 * disabled: the queue consumer skips every delivery of a disabled subscription without an
 * attempt, so accepting the request (202) would only show the delivery pending, then
 * failed, with nothing sent. A 409 `subscription_disabled` says why instead.
 */
import type { SubscriptionsView } from '../../db/subscription-snapshot.ts';
import {
  type DeliveryTargetCheck,
  listReplayTargets,
  type ReplayTarget,
} from '../../db/subscription-targets.ts';
import { HttpError } from '../../http/errors.ts';

/** A disabled subscription a replay of every matching one skipped, and why. */
export interface SkippedSubscription {
  readonly subscription_id: string;
  readonly reason: string;
}

/**
 * Refuses a retry of a delivery whose subscription is disabled or deleted (nothing would
 * be sent). A delivery that does not exist is left to the caller's 404.
 *
 * @param deliveryId - the delivery to retry.
 * @param target - its subscription, as found (worker/db/subscription-targets.ts).
 * @throws {HttpError} 409 `subscription_disabled` with the disable's reason and time;
 *   404 `not_found` when the subscription was deleted.
 */
export function refuseRetryOfDisabled(deliveryId: string, target: DeliveryTargetCheck): void {
  if (target.subscription === null) {
    throw new HttpError(
      404,
      'not_found',
      `The subscription ${JSON.stringify(target.subscriptionId)} of delivery ` +
        `${JSON.stringify(deliveryId)} was deleted`,
    );
  }
  if (!target.subscription.enabled) throw disabledError(target.subscription);
}

/**
 * Checks the targets of a replay. With `subscriptionId`: it must exist (404) and be enabled
 * (409). Without: every subscription the replay would send it to; when some match
 * and all of them are disabled, 409 (nothing would be sent); otherwise the disabled ones
 * are skipped and returned so the answer can name them.
 *
 * @param db - the event shard holding the event.
 * @param event - the event's id and type.
 * @param subscriptionId - the one subscription asked for, or `null` for every match.
 * @param view - how `db` reads the subscriptions; by default the table (`db` is `DB`).
 * @returns the disabled subscriptions skipped (none with `subscriptionId`).
 * @throws {HttpError} 404 `not_found`; 409 `subscription_disabled`.
 */
export async function checkReplayTargets(
  db: D1Database,
  event: { readonly eventId: string; readonly eventType: string },
  subscriptionId: string | null,
  view?: SubscriptionsView,
): Promise<SkippedSubscription[]> {
  const targets = await listReplayTargets(db, event, subscriptionId, view);
  if (subscriptionId !== null && targets.length === 0) {
    throw new HttpError(404, 'not_found', `No subscription ${JSON.stringify(subscriptionId)}`);
  }
  const disabled = targets.filter((target) => !target.enabled);
  if (disabled.length > 0 && disabled.length === targets.length) {
    throw disabled.length === 1 && disabled[0] !== undefined
      ? disabledError(disabled[0])
      : new HttpError(
          409,
          'subscription_disabled',
          `Every subscription this event would be replayed to is disabled: ${disabled
            .map((target) => `${JSON.stringify(target.id)} (${describe(target)})`)
            .join(
              '; ',
            )}; re-enable one with PATCH /admin/subscriptions/{id} {"enabled": true} first`,
        );
  }
  return disabled.map((target) => ({ subscription_id: target.id, reason: describe(target) }));
}

/**
 * The 409 `subscription_disabled` of one disabled subscription, naming its reason and since
 * when (also refuses a test event to it).
 *
 * @param target - the subscription, its disable's reason and time.
 */
export function disabledError(target: ReplayTarget): HttpError {
  return new HttpError(
    409,
    'subscription_disabled',
    `Subscription ${JSON.stringify(target.id)} is disabled (${describe(target)}); re-enable it ` +
      'with PATCH /admin/subscriptions/{id} {"enabled": true} first',
  );
}

function describe(target: ReplayTarget): string {
  const reason = target.reason ?? 'no reason recorded';
  return target.disabledAt === null
    ? reason
    : `${reason}, since ${new Date(target.disabledAt).toISOString()}`;
}
