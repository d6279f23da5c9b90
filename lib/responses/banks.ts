// Canonical shapes of the Banks section (docs/payments-api.md, "Resources > Bank", "Resources > Resolved account").
import * as v from 'valibot';
import type { Open } from './common.ts';

/** A bank (docs/payments-api.md, "Resources > Bank"). Codes are not unique across names. */
export const BankSchema: v.LooseObjectSchema<
  { readonly bank_name: v.StringSchema<undefined>; readonly bank_code: v.StringSchema<undefined> },
  undefined
> = v.looseObject({ bank_name: v.string(), bank_code: v.string() });

/** A bank. */
export type Bank = Open<v.InferOutput<typeof BankSchema>>;

/** An account number resolved to its holder (docs/payments-api.md, "Resources > Resolved account"). */
export const ResolvedAccountSchema: v.LooseObjectSchema<
  {
    readonly bank_name: v.StringSchema<undefined>;
    readonly bank_code: v.StringSchema<undefined>;
    readonly account_number: v.StringSchema<undefined>;
    readonly account_name: v.StringSchema<undefined>;
  },
  undefined
> = v.looseObject({
  bank_name: v.string(),
  bank_code: v.string(),
  account_number: v.string(),
  account_name: v.string(),
});

/** A resolved account. */
export type ResolvedAccount = Open<v.InferOutput<typeof ResolvedAccountSchema>>;
