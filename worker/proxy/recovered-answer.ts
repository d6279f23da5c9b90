// Verify before resend finds the record a money POST created; the caller still expects the
// answer of the POST it sent, not of the read endpoint that found the record. These
// builders give that answer back in the POST's own success shape (the shapes the payment
// service answers with), from the normalized record.
import type { EndpointName } from '../../lib/index.ts';

/** A normalized record, as the SDK's lookup returns it. */
type Fields = Readonly<Record<string, unknown>>;

/** `message` of a recovered answer: says where the answer came from. */
const RECOVERED_MESSAGE = 'Recovered from the existing record after an interrupted request';

// The record fields each creation answer carries, in the service's order.
const TRANSFER_FIELDS = [
  'reference',
  'amount',
  'currency',
  'destination_bank_code',
  'destination_bank_account',
  'destination_bank_name',
  'narration',
  'status',
  'created_at',
];
const DEBIT_FIELDS = [
  'payment_reference',
  'mandate_reference',
  'debit_amount',
  'narration',
  'status',
];
const VIRTUAL_ACCOUNT_FIELDS = [
  'account_number',
  'bank_name',
  'bank_code',
  'account_reference',
  'reservation_reference',
  'account_status',
  'customer_name',
  'customer_email',
];

/**
 * How each money POST with a lookup answers, rebuilt from its record; `null` where the
 * answer holds something no read gives back (a payment session's single-use checkout
 * address), so it cannot be recovered.
 */
const RECOVERED_ANSWERS = {
  'payments.initialize': null,
  'transfers.initialize': (record) => ({
    status: 'success',
    message: RECOVERED_MESSAGE,
    data: pick(record, TRANSFER_FIELDS),
  }),
  'refunds.initialize': (record) => ({
    status: 'success',
    message: RECOVERED_MESSAGE,
    ...pick(record, ['refund_reference', 'payment_reference']),
  }),
  'directDebits.debit': (record) => ({
    status: 'success',
    message: RECOVERED_MESSAGE,
    data: pick(record, DEBIT_FIELDS),
  }),
  'virtualAccounts.create': (record) => ({
    status: 'success',
    ...pick(record, VIRTUAL_ACCOUNT_FIELDS),
  }),
} satisfies Partial<Record<EndpointName, ((record: Fields) => unknown) | null>>;

/**
 * The success body a money POST would have answered, rebuilt from the record its lookup
 * found (the route's own success shape, e.g. `{ status, message, data }` for a transfer,
 * the flat creation shape for a virtual account).
 *
 * @param name - the proxied route's endpoint name.
 * @param record - the normalized record the lookup returned.
 * @returns the body, or `undefined` when the answer cannot be rebuilt (a payment session:
 *   its checkout address is in no read) or the endpoint has no builder.
 */
export function recoveredAnswer(name: EndpointName, record: unknown): unknown {
  const build = (RECOVERED_ANSWERS as Partial<Record<EndpointName, unknown>>)[name];
  return typeof build === 'function' ? build(record as Fields) : undefined;
}

// The listed fields the record has, in the listed order.
function pick(record: Fields, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (record[field] !== undefined) picked[field] = record[field];
  return picked;
}
