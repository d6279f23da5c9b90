// Confirming money webhooks against the service. A webhook says money moved; the record
// behind it, read through the SDK's normalized objects, says whether it did, has not yet,
// or never will.
import { BadRequestError } from './api-errors.ts';
import type { PaymentsClient } from './client.ts';
import {
  DEBITS_STATUS,
  type Endpoint,
  PAYMENTS_VERIFY,
  REFUNDS_RETRIEVE,
  TRANSFERS_VERIFY,
} from './endpoints.ts';
import { AbortError, PaymentsError, RequestValidationError } from './errors.ts';
import { findOrUndefined, type RequestOptions } from './internal/core.ts';
import { formatMinorUnits, parseMinorUnits } from './money.ts';

/** The fields of a webhook envelope confirmation reads (spec: Events). */
export interface ConfirmableEvent {
  readonly event_type: string;
  readonly data: unknown;
}

type Fields = Record<string, unknown>;

/**
 * What a rule's `find` saw: the record, or why there is none. `final` is `true` when no
 * record can ever match (the event names none, or a reference the service refuses to look
 * up), `false` when it may still appear (not found yet).
 */
export type RecordSearch =
  | { readonly record: Fields }
  | { readonly record?: undefined; readonly missing: string; readonly final: boolean };

/** How one money event type is checked against the record it names. */
export interface MoneyEventRule {
  /** Reads the record the event's `data` names. Throws the client's errors when the service cannot answer. */
  readonly find: (
    client: PaymentsClient,
    data: Fields,
    options: RequestOptions | undefined,
  ) => Promise<RecordSearch>;
  /** The record states (`status`, normalized) that agree with the event. */
  readonly statuses: readonly string[];
  /** Every final state of the record's kind: one of these that does not agree contradicts the event. */
  readonly final: readonly string[];
  /** The amount field, in the event's `data` and in the record (major units). */
  readonly amount: string;
}

const NOT_FOUND: RecordSearch = { missing: 'record not found', final: false };

/** A rule that finds the record at a read endpoint by one `data` field. */
function byReference(
  endpoint: Endpoint,
  field: string,
  statuses: readonly string[],
  final: readonly string[],
  amount = 'amount',
): MoneyEventRule {
  return {
    find: async (client, data, options) => {
      const reference = data[field];
      if (typeof reference !== 'string' || reference === '') {
        return { missing: `no ${field} in the event`, final: true };
      }
      try {
        const record = await findOrUndefined(() =>
          client.request(endpoint, { params: [reference] }, options),
        );
        return record === undefined ? NOT_FOUND : { record: record as Fields };
      } catch (error) {
        // A reference no path can carry (`.`, `..`) or the service refuses to look up (400)
        // can never name a record: waiting would not change the answer.
        if (
          error instanceof RangeError ||
          error instanceof RequestValidationError ||
          error instanceof BadRequestError
        ) {
          return { missing: `the service cannot look ${field} up`, final: true };
        }
        throw error;
      }
    },
    statuses,
    final,
    amount,
  };
}

/** How far either side of the event's `created_at` an inbound transfer is looked for, in ms. */
export const INBOUND_TRANSFER_WINDOW_MS = 60_000;

/** Most pages of 100 transactions read when looking for one inbound transfer. */
export const INBOUND_TRANSFER_MAX_PAGES = 50;

/**
 * An inbound transfer has no read endpoint of its own: it is looked for by `transaction_id`
 * among its account's transactions created within {@link INBOUND_TRANSFER_WINDOW_MS} of
 * the event's `created_at` (a window, not the instant, so a timestamp written with another
 * precision still finds it), every page of them up to {@link INBOUND_TRANSFER_MAX_PAGES}.
 */
const inboundTransfer: MoneyEventRule = {
  find: async (client, data, options) => {
    const { account_reference: account, transaction_id: id, created_at: at } = data;
    if (typeof account !== 'string' || typeof id !== 'string' || typeof at !== 'string') {
      return {
        missing: 'no account_reference, transaction_id or created_at in the event',
        final: true,
      };
    }
    const instant = Date.parse(at);
    if (!Number.isFinite(instant)) return { missing: 'created_at is not a date-time', final: true };
    let list: ReturnType<PaymentsClient['virtualAccounts']['listTransactions']>;
    try {
      list = client.virtualAccounts.listTransactions(
        {
          account_reference: account,
          start_date: new Date(instant - INBOUND_TRANSFER_WINDOW_MS).toISOString(),
          end_date: new Date(instant + INBOUND_TRANSFER_WINDOW_MS).toISOString(),
          page_size: 100,
        },
        options,
      );
    } catch (error) {
      // A filter the SDK refuses (a forged account_reference) names no record, ever.
      if (error instanceof RequestValidationError) {
        return { missing: 'the service cannot look account_reference up', final: true };
      }
      throw error;
    }
    let read = 0;
    for await (const page of list.pages()) {
      const found = page.items.find((item) => item.transaction_id === id);
      if (found !== undefined) return { record: found };
      if (++read >= INBOUND_TRANSFER_MAX_PAGES) break;
    }
    return NOT_FOUND;
  },
  statuses: ['success'],
  final: ['success', 'failed'],
  amount: 'amount',
};

const TRANSFER_FINAL = ['success', 'failed', 'expired', 'reversed'];
const REFUND_FINAL = ['success', 'failed'];
// The spec does not show the failed debit's state; both spellings are read as final.
const DEBIT_FINAL = ['success', 'failed', 'failure'];

/**
 * Every webhook event type that says money moved or failed to, with how it is confirmed:
 * payments by `GET /payments/verify`, transfers (success, failure, expiry, reversal) by
 * `GET /disbursements/verify`, refunds by `GET /refunds/{refund_reference}`, debits by
 * `GET /direct-debits/status`, inbound transfers to virtual accounts among the account's
 * transactions (`GET /merchants/virtual-accounts/transactions`). `mandate_activated`
 * moves no money and is not listed. A payment that is `abandoned` may still be paid while
 * its checkout lives, so only `success`, `failed`, `reversed` and `expired` are final.
 */
export const MONEY_EVENTS: Readonly<Record<string, MoneyEventRule>> = {
  charge_success: byReference(
    PAYMENTS_VERIFY,
    'reference',
    ['success'],
    ['success', 'failed', 'reversed', 'expired'],
  ),
  disbursement_success: byReference(TRANSFERS_VERIFY, 'reference', ['success'], TRANSFER_FINAL),
  disbursement_failed: byReference(TRANSFERS_VERIFY, 'reference', ['failed'], TRANSFER_FINAL),
  disbursement_expired: byReference(TRANSFERS_VERIFY, 'reference', ['expired'], TRANSFER_FINAL),
  disbursement_reversed: byReference(TRANSFERS_VERIFY, 'reference', ['reversed'], TRANSFER_FINAL),
  refund_success: byReference(REFUNDS_RETRIEVE, 'refund_reference', ['success'], REFUND_FINAL),
  refund_failed: byReference(REFUNDS_RETRIEVE, 'refund_reference', ['failed'], REFUND_FINAL),
  direct_debit_success: byReference(
    DEBITS_STATUS,
    'payment_reference',
    ['success'],
    DEBIT_FINAL,
    'debit_amount',
  ),
  direct_debit_failure: byReference(
    DEBITS_STATUS,
    'payment_reference',
    ['failed', 'failure'],
    DEBIT_FINAL,
    'debit_amount',
  ),
  virtual_account_credit: inboundTransfer,
};

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
  | { readonly outcome: 'confirmed'; readonly reason: string; readonly record: Fields }
  | { readonly outcome: 'not_yet'; readonly reason: string; readonly cause?: unknown }
  | { readonly outcome: 'contradicted'; readonly reason: string }
  | { readonly outcome: 'unchecked'; readonly reason: string };

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
      reason: `status ${status}, expected ${rule.statuses.join(' or ')}`,
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
