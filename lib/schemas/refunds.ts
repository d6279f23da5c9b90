// Request contract of the Refunds section (docs/payments-api.md, "Endpoints > Refunds").
import * as v from 'valibot';
import {
  AccountNumberSchema,
  AmountSchema,
  BankCodeSchema,
  type CheckedObjectSchema,
  CurrencySchema,
  crossFieldCheck,
  DateSchema,
  type Optional,
  type RangedListQuerySchema,
  ReferenceSchema,
  rangedListQuery,
  type TextSchema,
  textSchema,
} from './common.ts';

/** Refund statuses (docs/payments-api.md, "States > Refund"). */
export const REFUND_STATUSES = ['processing', 'success', 'failed'] as const;

/** A refund status value. */
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * Body of `POST /refunds/initialize` (docs/endpoints.md, `refunds.initialize`).
 * `amount` is in major units; `bank_code` is required when `account_number` is given.
 */
export const InitializeRefundRequestSchema: CheckedObjectSchema<{
  /** The reference of the payment to refund. */
  readonly payment_reference: typeof ReferenceSchema;
  /** Your reference for the refund, unique per merchant. */
  readonly refund_reference: typeof ReferenceSchema;
  /** The payment's currency. */
  readonly currency: typeof CurrencySchema;
  /** Major units, at most 2 fraction digits; at most what is left to refund. */
  readonly amount: typeof AmountSchema;
  /** Why, in words. */
  readonly reason: Optional<TextSchema>;
  /** A destination account, when the refund cannot go back the way the payment came. */
  readonly account_number: Optional<typeof AccountNumberSchema>;
  /** The destination account's bank code; required with `account_number`. */
  readonly bank_code: Optional<typeof BankCodeSchema>;
}> = v.pipe(
  v.object({
    payment_reference: ReferenceSchema,
    refund_reference: ReferenceSchema,
    currency: CurrencySchema,
    amount: AmountSchema,
    reason: v.optional(textSchema(500)),
    account_number: v.optional(AccountNumberSchema),
    bank_code: v.optional(BankCodeSchema),
  }),
  crossFieldCheck(
    ['account_number', 'bank_code'],
    (input) => input.account_number === undefined || input.bank_code !== undefined,
    'Required when account_number is given',
  ),
);

/** Input of {@link InitializeRefundRequestSchema}. */
export type InitializeRefundRequest = v.InferInput<typeof InitializeRefundRequestSchema>;

/**
 * Query of `GET /merchants/refunds` (docs/endpoints.md, `refunds.list`): optional
 * status, payment_reference, start_date and end_date (`YYYY-MM-DD`, whole days
 * inclusive), page (default 1), page_size (1..100, default 10).
 */
export const ListRefundsQuerySchema: RangedListQuerySchema<{
  /** Only refunds in this state. */
  readonly status: Optional<v.PicklistSchema<typeof REFUND_STATUSES, undefined>>;
  /** Only this payment's refunds. */
  readonly payment_reference: Optional<typeof ReferenceSchema>;
}> = rangedListQuery(
  {
    status: v.optional(v.picklist(REFUND_STATUSES)),
    payment_reference: v.optional(ReferenceSchema),
  },
  DateSchema,
);

/** Input of {@link ListRefundsQuerySchema} (query strings). */
export type ListRefundsQuery = v.InferInput<typeof ListRefundsQuerySchema>;
