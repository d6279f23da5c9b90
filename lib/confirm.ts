// Confirming money webhooks against the service. A webhook says money moved; the record
// behind it, read through the SDK's normalized objects, says whether it did.
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
import { parseMinorUnits } from './money.ts';

/** The fields of a webhook envelope confirmation reads (spec: Events). */
export interface ConfirmableEvent {
  readonly event_type: string;
  readonly data: unknown;
}

type Fields = Record<string, unknown>;

/** How one money event type is checked against the record it names. */
export interface MoneyEventRule {
  /** Reads the record the event's `data` names; `undefined` when the service has none. */
  readonly find: (
    client: PaymentsClient,
    data: Fields,
    options: RequestOptions | undefined,
  ) => Promise<Fields | undefined>;
  /** The record states (`status`, normalized) that agree with the event. */
  readonly statuses: readonly string[];
  /** The amount field, in the event's `data` and in the record (major units). */
  readonly amount: string;
}

/** A rule that finds the record at a read endpoint by one `data` field. */
function byReference(
  endpoint: Endpoint,
  field: string,
  statuses: readonly string[],
  amount = 'amount',
): MoneyEventRule {
  return {
    find: async (client, data, options) => {
      const reference = data[field];
      if (typeof reference !== 'string' || reference === '') return undefined;
      try {
        return (await findOrUndefined(() =>
          client.request(endpoint, { params: [reference] }, options),
        )) as Fields | undefined;
      } catch (error) {
        // A reference no path can carry (`.`, `..`) or the service refuses to look up (400)
        // names no record: the event is unconfirmed, not something to retry later.
        if (error instanceof RangeError || error instanceof BadRequestError) return undefined;
        throw error;
      }
    },
    statuses,
    amount,
  };
}

/**
 * An inbound transfer has no read endpoint of its own: it is looked for among its
 * account's transactions created at the event's `created_at`, by `transaction_id`.
 */
const inboundTransfer: MoneyEventRule = {
  find: async (client, data, options) => {
    const { account_reference: account, transaction_id: id, created_at: at } = data;
    if (typeof account !== 'string' || typeof id !== 'string' || typeof at !== 'string') {
      return undefined;
    }
    try {
      const page = await client.virtualAccounts
        .listTransactions(
          { account_reference: account, start_date: at, end_date: at, page_size: 100 },
          options,
        )
        .page(1);
      return page.items.find((item) => item.transaction_id === id);
    } catch (error) {
      // A malformed `created_at` (a forged event) is a filter the SDK refuses: no record.
      if (error instanceof RequestValidationError) return undefined;
      throw error;
    }
  },
  statuses: ['success'],
  amount: 'amount',
};

/**
 * Every webhook event type that says money moved or failed to, with how it is confirmed:
 * payments by `GET /payments/verify`, transfers (success, failure, expiry, reversal) by
 * `GET /disbursements/verify`, refunds by `GET /refunds/{refund_reference}`, debits by
 * `GET /direct-debits/status`, inbound transfers to virtual accounts among the account's
 * transactions. `mandate_activated` moves no money and is not listed.
 */
export const MONEY_EVENTS: Readonly<Record<string, MoneyEventRule>> = {
  charge_success: byReference(PAYMENTS_VERIFY, 'reference', ['success']),
  disbursement_success: byReference(TRANSFERS_VERIFY, 'reference', ['success']),
  disbursement_failed: byReference(TRANSFERS_VERIFY, 'reference', ['failed']),
  disbursement_expired: byReference(TRANSFERS_VERIFY, 'reference', ['expired']),
  disbursement_reversed: byReference(TRANSFERS_VERIFY, 'reference', ['reversed']),
  refund_success: byReference(REFUNDS_RETRIEVE, 'refund_reference', ['success']),
  refund_failed: byReference(REFUNDS_RETRIEVE, 'refund_reference', ['failed']),
  direct_debit_success: byReference(
    DEBITS_STATUS,
    'payment_reference',
    ['success'],
    'debit_amount',
  ),
  // The spec does not show the failed debit's state; both spellings agree.
  direct_debit_failure: byReference(
    DEBITS_STATUS,
    'payment_reference',
    ['failed', 'failure'],
    'debit_amount',
  ),
  virtual_account_credit: inboundTransfer,
};

/** What {@link confirmWebhookEvent} found. */
export type Confirmation =
  /** Not a money event: nothing to check. */
  | 'unchecked'
  /** The record exists, its state agrees and so does its amount. */
  | 'confirmed'
  /** No such record, or it disagrees, or the event names none. */
  | 'unconfirmed';

/**
 * Checks a money webhook against the service before acting on it: the record the event
 * names must exist, its state (`status`, normalized whichever variant the service sent)
 * must be one the event type implies, and its amount must equal the event's when both
 * carry one (compared in minor units, never as floats). The service's own advice after a
 * transfer webhook is to verify the transfer; this does it for every money event.
 *
 * @param client - a client of the service (signing credentials; the gateway passes its own).
 * @param event - the envelope's `event_type` and `data`.
 * @param options - per-call options of the lookups (signal, timeoutMs, requestId).
 * @returns `unchecked` for other event types, else `confirmed` or `unconfirmed`.
 * @throws the client's errors when the service cannot answer (ConnectionError,
 *   TimeoutError, APIError other than 404, ResponseValidationError): the caller should
 *   retry later rather than decide.
 *
 * @example
 * ```ts
 * const event = await parseWebhookEvent(rawBody, request.headers, { secret });
 * if ((await confirmWebhookEvent(client, event)) === 'confirmed') await fulfil(event.data);
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
  if (rule === undefined) return 'unchecked';
  const data = isFields(event.data) ? event.data : {};
  const record = await rule.find(client, data, options);
  if (record === undefined) return 'unconfirmed';
  const status = String(record.status).toLowerCase();
  if (!rule.statuses.includes(status)) return 'unconfirmed';
  const claimed = data[rule.amount];
  const actual = record[rule.amount];
  // Only two amounts can disagree; a side without one leaves the state to decide.
  if (claimed === undefined || claimed === null || actual === undefined) return 'confirmed';
  const minor = parseMinorUnits(claimed);
  return minor !== undefined && minor === parseMinorUnits(actual) ? 'confirmed' : 'unconfirmed';
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
