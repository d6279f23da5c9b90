// Request contract of the Virtual accounts section (docs/payments-api.md, "Endpoints > Virtual accounts").
import * as v from 'valibot';
import {
  CurrencySchema,
  DateTimeSchema,
  EmailSchema,
  MetadataSchema,
  type Optional,
  type PatternSchema,
  type RangedListQuerySchema,
  ReferenceSchema,
  rangedListQuery,
  type TextSchema,
  textSchema,
} from './common.ts';

/** Virtual account transaction statuses (docs/payments-api.md, "States > Virtual account transaction"). */
export const VIRTUAL_ACCOUNT_TRANSACTION_STATUSES = ['success', 'processing', 'failed'] as const;

/**
 * Body of `POST /virtual-accounts` (docs/endpoints.md, `virtualAccounts.create`):
 * `bvn` is the 11-digit Bank Verification Number; account_reference is unique.
 */
export const CreateVirtualAccountRequestSchema: v.ObjectSchema<
  {
    /** Your reference for the account, unique per merchant. */
    readonly account_reference: typeof ReferenceSchema;
    /** The account holder's name. */
    readonly customer_name: TextSchema;
    /** The account holder's email address. */
    readonly customer_email: typeof EmailSchema;
    /** ISO 4217 code in upper case, e.g. `NGN`. */
    readonly currency_code: typeof CurrencySchema;
    /** The holder's 11-digit Bank Verification Number. */
    readonly bvn: PatternSchema;
    /** Key-value pairs returned unchanged (a JSON object). */
    readonly metadata: Optional<typeof MetadataSchema>;
  },
  undefined
> = v.object({
  account_reference: ReferenceSchema,
  customer_name: textSchema(200),
  customer_email: EmailSchema,
  currency_code: CurrencySchema,
  bvn: v.pipe(v.string(), v.regex(/^\d{11}$/, 'Expected an 11-digit BVN')),
  metadata: v.optional(MetadataSchema),
});

/** Input of {@link CreateVirtualAccountRequestSchema}. */
export type CreateVirtualAccountRequest = v.InferInput<typeof CreateVirtualAccountRequestSchema>;

/** Body of `POST /virtual-accounts/email` (docs/payments-api.md, "Endpoints > Virtual accounts"). */
export const VirtualAccountByEmailRequestSchema: v.ObjectSchema<
  {
    /** The account holder's email address. */
    readonly email: typeof EmailSchema;
  },
  undefined
> = v.object({ email: EmailSchema });

/**
 * Query of `GET /merchants/virtual-accounts/transactions` (docs/payments-api.md, "Endpoints > Virtual accounts"):
 * optional account_reference, status, start_date and end_date (ISO 8601, inclusive, on
 * created_at), page (>= 1, default 1), page_size (1..100, default 10).
 */
export const ListVirtualAccountTransactionsQuerySchema: RangedListQuerySchema<{
  /** Only this account's transactions. */
  readonly account_reference: Optional<typeof ReferenceSchema>;
  /** Only transactions in this state. */
  readonly status: Optional<v.PicklistSchema<typeof VIRTUAL_ACCOUNT_TRANSACTION_STATUSES, string>>;
}> = rangedListQuery(
  {
    account_reference: v.optional(ReferenceSchema),
    status: v.optional(
      v.picklist(
        VIRTUAL_ACCOUNT_TRANSACTION_STATUSES,
        `Expected one of ${VIRTUAL_ACCOUNT_TRANSACTION_STATUSES.join(', ')}`,
      ),
    ),
  },
  DateTimeSchema,
);

/** Input of {@link ListVirtualAccountTransactionsQuerySchema} (query strings). */
export type ListVirtualAccountTransactionsQuery = v.InferInput<
  typeof ListVirtualAccountTransactionsQuerySchema
>;
