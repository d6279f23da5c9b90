// Request contract of the Banks section (docs/payments-api.md, "Endpoints > Banks").
import * as v from 'valibot';
import {
  AccountNumberSchema,
  BankCodeSchema,
  CurrencySchema,
  type PatternSchema,
} from './common.ts';

/**
 * Query of `GET /banks` (docs/endpoints.md, `banks.list`): `country_code`, an upper-case
 * ISO 3166-1 alpha-2 code. @default 'NG'
 */
export const ListBanksQuerySchema: v.ObjectSchema<
  {
    /** ISO 3166-1 alpha-2 code in upper case. @default NG */
    readonly country_code: v.OptionalSchema<PatternSchema, 'NG'>;
  },
  undefined
> = v.object({
  country_code: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'Expected an ISO 3166-1 alpha-2 code such as NG')),
    'NG',
  ),
});

/** Input of {@link ListBanksQuerySchema}. */
export type ListBanksQuery = v.InferInput<typeof ListBanksQuerySchema>;

/**
 * Body of `POST /banks/resolve` (docs/endpoints.md, `banks.resolve`): `bank` is the bank
 * code, `account` the account number.
 */
export const ResolveAccountRequestSchema: v.ObjectSchema<
  {
    /** The account's bank code (3 to 6 digits). */
    readonly bank: typeof BankCodeSchema;
    /** The account number (6 to 20 digits). */
    readonly account: typeof AccountNumberSchema;
    /** ISO 4217 code in upper case, e.g. `NGN`. */
    readonly currency: typeof CurrencySchema;
  },
  undefined
> = v.object({
  bank: BankCodeSchema,
  account: AccountNumberSchema,
  currency: CurrencySchema,
});

/** Input of {@link ResolveAccountRequestSchema}. */
export type ResolveAccountRequest = v.InferInput<typeof ResolveAccountRequestSchema>;
