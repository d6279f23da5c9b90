// Request contract of the Virtual accounts section (spec: Endpoints > Virtual accounts).
import * as v from 'valibot';
import {
  type CheckedObjectSchema,
  CurrencySchema,
  crossFieldCheck,
  DateTimeSchema,
  EmailSchema,
  isOrderedRange,
  MetadataSchema,
  type Optional,
  PaginationQueryEntries,
  type PatternSchema,
  RANGE_ORDER_MESSAGE,
  ReferenceSchema,
  type TextSchema,
  textSchema,
} from './common.ts';

/** Virtual account transaction statuses (spec: Virtual account transaction status). */
export const VIRTUAL_ACCOUNT_TRANSACTION_STATUSES = ['success', 'processing', 'failed'] as const;

/**
 * Body of `POST /virtual-accounts` (docs/endpoints.md, `virtualAccounts.create`):
 * `bvn` is the 11-digit Bank Verification Number; account_reference is unique.
 */
export const CreateVirtualAccountRequestSchema: v.ObjectSchema<
  {
    readonly account_reference: typeof ReferenceSchema;
    readonly customer_name: TextSchema;
    readonly customer_email: typeof EmailSchema;
    readonly currency_code: typeof CurrencySchema;
    readonly bvn: PatternSchema;
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

/** Body of `POST /virtual-accounts/email` (spec: Virtual accounts). */
export const VirtualAccountByEmailRequestSchema: v.ObjectSchema<
  { readonly email: typeof EmailSchema },
  undefined
> = v.object({ email: EmailSchema });

/**
 * Query of `GET /merchants/virtual-accounts/transactions` (spec: Virtual accounts):
 * optional account_reference, status, start_date and end_date (ISO 8601, inclusive, on
 * created_at), page (>= 1, default 1), page_size (1..100, default 10).
 */
export const ListVirtualAccountTransactionsQuerySchema: CheckedObjectSchema<
  {
    readonly account_reference: Optional<typeof ReferenceSchema>;
    readonly status: Optional<
      v.PicklistSchema<typeof VIRTUAL_ACCOUNT_TRANSACTION_STATUSES, string>
    >;
    readonly start_date: Optional<typeof DateTimeSchema>;
    readonly end_date: Optional<typeof DateTimeSchema>;
  } & typeof PaginationQueryEntries
> = v.pipe(
  v.object({
    account_reference: v.optional(ReferenceSchema),
    status: v.optional(
      v.picklist(
        VIRTUAL_ACCOUNT_TRANSACTION_STATUSES,
        `Expected one of ${VIRTUAL_ACCOUNT_TRANSACTION_STATUSES.join(', ')}`,
      ),
    ),
    start_date: v.optional(DateTimeSchema),
    end_date: v.optional(DateTimeSchema),
    ...PaginationQueryEntries,
  }),
  crossFieldCheck(['start_date', 'end_date'], isOrderedRange, RANGE_ORDER_MESSAGE),
);

/** Input of {@link ListVirtualAccountTransactionsQuerySchema} (query strings). */
export type ListVirtualAccountTransactionsQuery = v.InferInput<
  typeof ListVirtualAccountTransactionsQuerySchema
>;
