// Confirmation of money events before fan-out: a webhook saying money moved is a hint;
// the record at the payments API, read through the SDK, is the truth.
import { confirmWebhookEvent as confirmWithClient, MONEY_EVENTS } from '../../lib/index.ts';
import { settingsOf } from '../config.ts';
import type { WebhookEventStatus } from '../db/webhook-events.ts';
import { logEvent } from '../http/log.ts';
import { upstreamClient } from '../upstream/sdk.ts';

/** What one check found: the status it leads to and why (`null` when nothing was checked). */
export interface ConfirmationDecision {
  /**
   * `received` (not a money event, or confirmation off), `confirmed`, `unconfirmed`
   * (contradicted), or `awaiting_confirmation` (not yet: check again later).
   */
  readonly status: WebhookEventStatus;
  /** The SDK's reason in words (`status processing`, `record not found`, ...). */
  readonly reason: string | null;
}

/**
 * Whether an event of this type is checked upstream before it fans out: confirmation is on
 * (`CONFIRM_MONEY_EVENTS`) and the type is one of the SDK's money events. Every other event is
 * stored `received` without a lookup, so nothing about it needs reading before it is stored.
 *
 * @param env - the `CONFIRM_MONEY_EVENTS` setting.
 * @param eventType - the envelope's `event_type`.
 */
export function confirmsType(env: Env, eventType: string): boolean {
  return settingsOf(env).confirmMoneyEvents && Object.hasOwn(MONEY_EVENTS, eventType);
}

/**
 * Decides the status to store for an event received by the relay, from a check with the
 * SDK's `confirmWebhookEvent` (the money event types and their checks live there, beside
 * the endpoint table). Other events, or every event when `CONFIRM_MONEY_EVENTS` is off, are
 * `received` without any lookup. A money event is `confirmed` when its record exists
 * upstream and agrees (state, amount, currency); `unconfirmed` when the record contradicts
 * it (another amount, currency or final state, or no reference the service could look up);
 * `awaiting_confirmation` when it cannot say yet (no record yet, a state that is not final,
 * or the upstream could not answer: a network error, a timeout, an error status other than
 * 400/404, a response of the wrong shape). Never throws for the upstream's sake: an outage
 * defers the decision.
 *
 * @param env - upstream settings and credentials, `CONFIRM_MONEY_EVENTS`.
 * @param event - the envelope's `event_type` and `data`.
 * @param requestId - sent upstream as `X-Request-Id` on every lookup.
 * @returns the status to store and the reason.
 * @throws {InternalError} 500 when the upstream credentials are not set.
 *
 * @example
 * ```ts
 * const { status, reason } = await decideConfirmation(env, envelope, context.requestId);
 * ```
 */
export async function decideConfirmation(
  env: Env,
  event: { readonly event_type: string; readonly data: unknown },
  requestId: string,
): Promise<ConfirmationDecision> {
  if (!confirmsType(env, event.event_type)) return { status: 'received', reason: null };
  const confirmation = await confirmWithClient(upstreamClient(env), event, { requestId });
  switch (confirmation.outcome) {
    case 'unchecked':
      return { status: 'received', reason: null };
    case 'confirmed':
      return { status: 'confirmed', reason: confirmation.reason };
    case 'contradicted':
      return { status: 'unconfirmed', reason: confirmation.reason };
    case 'not_yet':
      if (confirmation.cause !== undefined) {
        logEvent('warn', 'confirmation_upstream_failed', {
          request_id: requestId,
          event_type: event.event_type,
          error_message: confirmation.reason,
        });
      }
      return { status: 'awaiting_confirmation', reason: confirmation.reason };
  }
}
