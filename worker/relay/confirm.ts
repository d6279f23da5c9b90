// Confirmation of money events before fan-out: a webhook saying money moved is a hint;
// the record at the payments API, read through the SDK, is the truth.
import { confirmWebhookEvent as confirmWithClient } from '../../lib/index.ts';
import { settingsOf } from '../config.ts';
import { HttpError, InternalError } from '../http/errors.ts';
import { upstreamClient } from '../upstream/sdk.ts';

/** What the ingress stores: `received` (not a money event, or confirmation off), `confirmed` or `unconfirmed`. */
type ConfirmationStatus = 'received' | 'confirmed' | 'unconfirmed';

/** Seconds the provider is asked to wait before retrying when the upstream could not answer. */
const CONFIRM_RETRY_AFTER_SEC = 60;

/**
 * Decides the stored status of an incoming event with the SDK's `confirmWebhookEvent`
 * (the money event types and their checks live there, beside the endpoint table). Other
 * events, or every event when `CONFIRM_MONEY_EVENTS` is off, are `received` without any
 * lookup. A money event is `confirmed` when its record exists upstream, its state agrees
 * and so does its amount; `unconfirmed` otherwise (only confirmed and received events
 * are fanned out).
 *
 * @param env - upstream settings and credentials, `CONFIRM_MONEY_EVENTS`.
 * @param event - the envelope's `event_type` and `data`.
 * @param requestId - sent upstream as `X-Request-Id` on every lookup.
 * @returns the status to store.
 * @throws {HttpError} 503 `upstream_unreachable` with `Retry-After` when the upstream
 *   cannot answer (network error, timeout, an error status other than 404, an answer of
 *   the wrong shape): the event must then not be stored, so the provider's retry is not
 *   taken for a duplicate.
 * @throws {InternalError} 500 when the upstream credentials are not set.
 *
 * @example
 * ```ts
 * const status = await confirmWebhookEvent(env, envelope, context.requestId);
 * ```
 */
export async function confirmWebhookEvent(
  env: Env,
  event: { readonly event_type: string; readonly data: unknown },
  requestId: string,
): Promise<ConfirmationStatus> {
  if (!settingsOf(env).confirmMoneyEvents) return 'received';
  const client = upstreamClient(env);
  let outcome: Awaited<ReturnType<typeof confirmWithClient>>;
  try {
    outcome = await confirmWithClient(client, event, { requestId });
  } catch (error) {
    if (error instanceof InternalError) throw error;
    throw new HttpError(
      503,
      'upstream_unreachable',
      'The payment service could not confirm the event; retry later',
      { headers: { 'Retry-After': String(CONFIRM_RETRY_AFTER_SEC) }, cause: error },
    );
  }
  return outcome === 'unchecked' ? 'received' : outcome;
}
