// Request contract of the Transfers section (docs/payments-api.md, "Endpoints > Transfers").
import * as v from 'valibot';
import {
  AccountNumberSchema,
  AmountSchema,
  BankCodeSchema,
  CurrencySchema,
  DateSchema,
  EmailSchema,
  HttpUrlSchema,
  MetadataSchema,
  type Optional,
  type RangedListQuerySchema,
  ReferenceSchema,
  rangedListQuery,
  type TextSchema,
  textSchema,
} from './common.ts';

/** Transfer statuses (docs/payments-api.md, "States > Transfer"). */
export const TRANSFER_STATUSES = [
  'processing',
  'success',
  'failed',
  'reversed',
  'expired',
] as const;

/** A transfer status value. */
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/**
 * Body of `POST /disbursements/initialize` (docs/endpoints.md, `transfers.initialize`).
 * `amount` is in major units; `reference` must be unique across the merchant's transfers.
 */
export const InitializeTransferRequestSchema: v.ObjectSchema<
  {
    /** The recipient's name (1 to 200 characters). */
    readonly customer_name: TextSchema;
    /** The recipient's email address. */
    readonly customer_email: typeof EmailSchema;
    /** Your reference, unique across the merchant's transfers. */
    readonly reference: typeof ReferenceSchema;
    /** Major units, at most 2 fraction digits; the fee is added on top. */
    readonly amount: typeof AmountSchema;
    /** ISO 4217 code in upper case, e.g. `NGN`. */
    readonly currency: typeof CurrencySchema;
    /** The recipient bank's code (3 to 6 digits, from `GET /banks`). */
    readonly destination_bank_code: typeof BankCodeSchema;
    /** The account number (6 to 20 digits). */
    readonly destination_bank_account: typeof AccountNumberSchema;
    /** The recipient bank's name, as shown to people. */
    readonly destination_bank_name: TextSchema;
    /** Text on the transfer, for the recipient. */
    readonly narration: Optional<TextSchema>;
    /** Key-value pairs returned unchanged (a JSON object). */
    readonly metadata: Optional<typeof MetadataSchema>;
    /** Where this transfer's webhooks go instead of the merchant's default URL. */
    readonly webhook_url: Optional<typeof HttpUrlSchema>;
  },
  undefined
> = v.object({
  customer_name: textSchema(200),
  customer_email: EmailSchema,
  reference: ReferenceSchema,
  amount: AmountSchema,
  currency: CurrencySchema,
  destination_bank_code: BankCodeSchema,
  destination_bank_account: AccountNumberSchema,
  destination_bank_name: textSchema(200),
  narration: v.optional(textSchema(255)),
  metadata: v.optional(MetadataSchema),
  webhook_url: v.optional(HttpUrlSchema),
});

/** Input of {@link InitializeTransferRequestSchema}. */
export type InitializeTransferRequest = v.InferInput<typeof InitializeTransferRequestSchema>;

/**
 * Query of `GET /merchants/disbursements` (docs/endpoints.md, `transfers.list`):
 * optional status, customer_email (recipient), start_date and end_date (`YYYY-MM-DD`,
 * whole days inclusive, on the creation date), page (default 1), page_size (1..100, default 10).
 */
export const ListDisbursementsQuerySchema: RangedListQuerySchema<{
  /** Only transfers in this state. */
  readonly status: Optional<v.PicklistSchema<typeof TRANSFER_STATUSES, undefined>>;
  /** Only transfers to this recipient. */
  readonly customer_email: Optional<typeof EmailSchema>;
}> = rangedListQuery(
  {
    status: v.optional(v.picklist(TRANSFER_STATUSES)),
    customer_email: v.optional(EmailSchema),
  },
  DateSchema,
);

/** Input of {@link ListDisbursementsQuerySchema} (query strings). */
export type ListDisbursementsQuery = v.InferInput<typeof ListDisbursementsQuerySchema>;
