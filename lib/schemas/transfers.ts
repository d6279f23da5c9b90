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
    readonly customer_name: TextSchema;
    readonly customer_email: typeof EmailSchema;
    readonly reference: typeof ReferenceSchema;
    readonly amount: typeof AmountSchema;
    readonly currency: typeof CurrencySchema;
    readonly destination_bank_code: typeof BankCodeSchema;
    readonly destination_bank_account: typeof AccountNumberSchema;
    readonly destination_bank_name: TextSchema;
    readonly narration: Optional<TextSchema>;
    readonly metadata: Optional<typeof MetadataSchema>;
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
  readonly status: Optional<v.PicklistSchema<typeof TRANSFER_STATUSES, undefined>>;
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
