// Confirming money webhooks against the service. A webhook says money moved; the record
// behind it, read through the SDK's normalized objects, says whether it did, has not yet,
// or never will.
import type { PaymentsClient } from './client.ts';
import { MONEY_EVENTS, type RecordSearch } from './confirm-rules.ts';
import { AbortError, PaymentsError } from './errors.ts';
import type { RequestOptions } from './internal/core.ts';
import { formatMinorUnits, parseMinorUnits } from './money.ts';

/** The fields of a webhook envelope confirmation reads (docs/payments-api.md, "Events"). */
export interface ConfirmableEvent {
  /** The envelope's `event_type`, e.g. `charge_success` (not a money event: `unchecked`). */
  readonly event_type: string;
  /** The envelope's `data`: the fields that name the record (its reference) and its amount. */
  readonly data: unknown;
}

type Fields = Record<string, unknown>;

/**
 * What {@link confirmWebhookEvent} found, with a `reason` in words (for logs and operators):
 * - `confirmed`: the record exists, its state agrees, and so do its amount and currency.
 * - `not_yet`: it may still be confirmed, ask again later: no record yet (`record not
 *   found`), a state that is not final (`status processing`), or the service could not
 *   answer (`cause` holds the client's error).
 * - `contradicted`: it never will be: another amount (`amount 100.00 differs from the
 *   record's 90.00`), currency, or final state (`status failed, expected success`), or the
 *   event names no record the service could look up.
 * - `unchecked`: not a money event, nothing to check.
 */
export type Confirmation =
  | {
      /** The record exists and agrees with the event. */
      readonly outcome: 'confirmed';
      /** What was checked, in words. */
      readonly reason: string;
      /** The record found (normalized), whose state, amount and currency agree. */
      readonly record: Fields;
    }
  | {
      /** It may still be confirmed: ask again later. */
      readonly outcome: 'not_yet';
      /** What is missing, in words (`record not found`, `status processing`). */
      readonly reason: string;
      /** The client's error when the service could not answer. */
      readonly cause?: unknown;
    }
  | {
      /** The record disagrees for good, or cannot exist. */
      readonly outcome: 'contradicted';
      /** What disagrees, in words. */
      readonly reason: string;
    }
  | {
      /** Not a money event: nothing to check. */
      readonly outcome: 'unchecked';
      /** Why nothing was checked, in words. */
      readonly reason: string;
    };

/** The `outcome` values of a {@link Confirmation}. */
export type ConfirmationOutcome = Confirmation['outcome'];

/**
 * Checks a money webhook against the service before acting on it: the record the event
 * names must exist, its amount and currency must equal the event's when both carry one
 * (amounts compared in minor units, never as floats), and its state (`status`, normalized
 * whichever variant the service sent) must be one the event type implies. A webhook can
 * arrive before the record is visible or settled, so "not found" and a state that is not
 * final are `not_yet` (ask again later), not a contradiction; the service's own advice after
 * a transfer webhook is to verify the transfer, and this does it for every money event.
 *
 * @param client - a client of the service (signing credentials; the gateway passes its own).
 * @param event - the envelope's `event_type` and `data`.
 * @param options - per-call options of the lookups (signal, timeoutMs, requestId).
 * @returns a {@link Confirmation}: `outcome` (`confirmed`, `not_yet`, `contradicted` or
 *   `unchecked`) and `reason`. When the service cannot answer (ConnectionError,
 *   TimeoutError, APIError other than 400 and 404, ResponseValidationError) the outcome is
 *   `not_yet` with the error as `cause`.
 * @throws {AbortError} when `options.signal` aborts; other errors are bugs and thrown as they are.
 *
 * @example
 * ```ts
 * const event = await parseWebhookEvent(rawBody, request.headers, { secret });
 * const confirmation = await confirmWebhookEvent(client, event);
 * if (confirmation.outcome === 'confirmed') await fulfil(event.data);
 * // Answer non-2xx so the provider sends it again later:
 * else if (confirmation.outcome === 'not_yet') return new Response(null, { status: 503 });
 * else if (confirmation.outcome === 'contradicted') alertOperators(confirmation.reason);
 * ```
 */
export async function confirmWebhookEvent(
  client: PaymentsClient,
  event: ConfirmableEvent,
  options?: RequestOptions,
): Promise<Confirmation> {
  const rule = Object.hasOwn(MONEY_EVENTS, event.event_type)
    ? MONEY_EVENTS[event.event_type]
    : undefined;
  if (rule === undefined) return { outcome: 'unchecked', reason: 'not a money event' };
  const data = isFields(event.data) ? event.data : {};
  let search: RecordSearch;
  try {
    search = await rule.find(client, data, options);
  } catch (error) {
    if (!(error instanceof PaymentsError) || error instanceof AbortError) throw error;
    return {
      outcome: 'not_yet',
      reason: `the service could not answer: ${error.message}`,
      cause: error,
    };
  }
  if (search.record === undefined) {
    return { outcome: search.final ? 'contradicted' : 'not_yet', reason: search.missing };
  }
  const { record } = search;
  const disagreement =
    amountDisagreement(data[rule.amount], record[rule.amount]) ??
    currencyDisagreement(data.currency, record.currency);
  if (disagreement !== undefined) return { outcome: 'contradicted', reason: disagreement };
  const status = String(record.status).toLowerCase();
  if (rule.statuses.includes(status)) {
    return { outcome: 'confirmed', reason: `status ${status}`, record };
  }
  if (rule.final.includes(status)) {
    return {
      outcome: 'contradicted',
      reason: `status ${status}, expected ${rule.statuses[0]}`,
    };
  }
  return { outcome: 'not_yet', reason: `status ${status}` };
}

/** Why two amounts disagree, or `undefined` when they agree or a side carries none. */
function amountDisagreement(claimed: unknown, actual: unknown): string | undefined {
  if (claimed === undefined || claimed === null || actual === undefined) return undefined;
  const claimedMinor = parseMinorUnits(claimed);
  if (claimedMinor === undefined) return `amount ${JSON.stringify(claimed)} is not an amount`;
  const actualMinor = parseMinorUnits(actual);
  if (claimedMinor === actualMinor) return undefined;
  const shown = actualMinor === undefined ? JSON.stringify(actual) : formatMinorUnits(actualMinor);
  return `amount ${formatMinorUnits(claimedMinor)} differs from the record's ${shown}`;
}

/** Why two currency codes disagree (letter case aside), or `undefined`. */
function currencyDisagreement(claimed: unknown, actual: unknown): string | undefined {
  if (typeof claimed !== 'string' || typeof actual !== 'string') return undefined;
  if (claimed.toUpperCase() === actual.toUpperCase()) return undefined;
  return `currency ${claimed} differs from the record's ${actual}`;
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
