// Canonical shapes of virtual accounts (docs/payments-api.md, "Resources > Virtual account",
// "Resources > Virtual account transaction").
import * as v from 'valibot';
import type { Optional } from '../schemas/common.ts';
import { type Open, OptionalMetadata, OptionalText, ResponseAmount } from './common.ts';

/**
 * A virtual account. The creation response is flat and lacks currency_code, metadata and
 * created_at, so those are optional. `account_status`: active, inactive, frozen, or newer.
 */
export const VirtualAccountSchema: v.LooseObjectSchema<
  {
    readonly account_reference: v.StringSchema<undefined>;
    readonly account_number: v.StringSchema<undefined>;
    readonly bank_name: typeof OptionalText;
    readonly bank_code: typeof OptionalText;
    readonly account_status: typeof OptionalText;
    readonly reservation_reference: typeof OptionalText;
    readonly customer_name: typeof OptionalText;
    readonly customer_email: typeof OptionalText;
    readonly currency_code: typeof OptionalText;
    readonly metadata: typeof OptionalMetadata;
    readonly created_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  account_reference: v.string(),
  account_number: v.string(),
  bank_name: OptionalText,
  bank_code: OptionalText,
  account_status: OptionalText,
  reservation_reference: OptionalText,
  customer_name: OptionalText,
  customer_email: OptionalText,
  currency_code: OptionalText,
  metadata: OptionalMetadata,
  created_at: OptionalText,
});

/** A virtual account (docs/payments-api.md, "Resources > Virtual account"). */
export type VirtualAccount = Open<v.InferOutput<typeof VirtualAccountSchema>>;

/** An inbound transfer to a virtual account. Amount in major units. */
export const VirtualAccountTransactionSchema: v.LooseObjectSchema<
  {
    readonly transaction_id: v.StringSchema<undefined>;
    readonly account_reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly amount: typeof ResponseAmount;
    readonly currency: Optional<v.StringSchema<undefined>>;
    readonly account_number: typeof OptionalText;
    readonly sender_name: typeof OptionalText;
    readonly sender_bank: typeof OptionalText;
    readonly narration: typeof OptionalText;
    readonly metadata: typeof OptionalMetadata;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  transaction_id: v.string(),
  account_reference: v.string(),
  status: v.string(),
  amount: ResponseAmount,
  currency: v.optional(v.string()),
  account_number: OptionalText,
  sender_name: OptionalText,
  sender_bank: OptionalText,
  narration: OptionalText,
  metadata: OptionalMetadata,
  created_at: OptionalText,
  updated_at: OptionalText,
});

/** A virtual account transaction (docs/payments-api.md, "Resources > Virtual account transaction"). */
export type VirtualAccountTransaction = Open<v.InferOutput<typeof VirtualAccountTransactionSchema>>;
