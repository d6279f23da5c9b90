// The money event types and how each is checked against the record it names: the read
// endpoint (or, for inbound transfers, the transaction list) and the states that agree.
import { BadRequestError } from './api-errors.ts';
import type { PaymentsClient } from './client.ts';
import {
  DEBITS_STATUS,
  type Endpoint,
  PAYMENTS_VERIFY,
  REFUNDS_RETRIEVE,
  TRANSFERS_VERIFY,
} from './endpoints.ts';
import { RequestValidationError } from './errors.ts';
import { findOrUndefined, type RequestOptions } from './internal/core.ts';

type Fields = Record<string, unknown>;

/**
 * What a rule's `find` saw: the record, or why there is none. `final` is `true` when no
 * record can ever match (the event names none, or a reference the service refuses to look
 * up), `false` when it may still appear (not found yet).
 */
export type RecordSearch =
  | {
      /** The record found (normalized). */
      readonly record: Fields;
    }
  | {
      /** No record was found. */
      readonly record?: undefined;
      /** Why, in words (`record not found`). */
      readonly missing: string;
      /** `true` when no record can ever match, `false` when it may still appear. */
      readonly final: boolean;
    };

/** How one money event type is checked against the record it names. */
export interface MoneyEventRule {
  /** Reads the record the event's `data` names. Throws the client's errors when the service cannot answer. */
  readonly find: (
    client: PaymentsClient,
    data: Fields,
    options: RequestOptions | undefined,
  ) => Promise<RecordSearch>;
  /** The record states (`status`, normalized) that agree with the event, the one the event names first. */
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
        // can never name a record: waiting would not change the response.
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

/**
 * How far either side of the event's `created_at` an inbound transfer is looked for, in ms.
 * @internal Exported for the test that spreads transfers over the window to reach a later page.
 */
export const INBOUND_TRANSFER_WINDOW_MS = 60_000;

/** Most pages of 100 transactions read when looking for one inbound transfer. */
const INBOUND_TRANSFER_MAX_PAGES = 50;

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
  // A reversal follows a success, so a record found reversed (a check that came late: a
  // held-up webhook, a re-check after an outage) still proves the success happened.
  charge_success: byReference(
    PAYMENTS_VERIFY,
    'reference',
    ['success', 'reversed'],
    ['success', 'failed', 'reversed', 'expired'],
  ),
  disbursement_success: byReference(
    TRANSFERS_VERIFY,
    'reference',
    ['success', 'reversed'],
    TRANSFER_FINAL,
  ),
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
