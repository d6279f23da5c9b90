// Canonical shapes of direct debit (docs/payments-api.md, "Resources > Mandate",
// "Resources > Activation challenge", "Resources > Direct debit transaction").
import * as v from 'valibot';
import type { Optional } from '../schemas/common.ts';
import { type Open, OptionalText, ResponseAmount } from './common.ts';

/** A mandate (pending, active, cancelled, or a newer state passed through). Amount in major units. */
export const MandateSchema: v.LooseObjectSchema<
  {
    readonly mandate_reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly customer_name: typeof OptionalText;
    readonly customer_email: typeof OptionalText;
    readonly account_number: typeof OptionalText;
    readonly bank_code: typeof OptionalText;
    readonly start_date: typeof OptionalText;
    readonly end_date: typeof OptionalText;
    readonly monthly_amount: Optional<typeof ResponseAmount>;
    readonly monthly_debit_count: Optional<v.NumberSchema<undefined>>;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  mandate_reference: v.string(),
  status: v.string(),
  customer_name: OptionalText,
  customer_email: OptionalText,
  account_number: OptionalText,
  bank_code: OptionalText,
  start_date: OptionalText,
  end_date: OptionalText,
  monthly_amount: v.optional(ResponseAmount),
  monthly_debit_count: v.optional(v.number()),
  created_at: OptionalText,
  updated_at: OptionalText,
});

/** A mandate (docs/payments-api.md, "Resources > Mandate"). */
export type Mandate = Open<v.InferOutput<typeof MandateSchema>>;

/** A mandate's reference and new state, as validate-activation and cancel answer. */
export const MandateStateSchema: v.LooseObjectSchema<
  {
    readonly mandate_reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
  },
  undefined
> = v.looseObject({
  mandate_reference: v.string(),
  status: v.string(),
});

/** A mandate state change. */
export type MandateState = Open<v.InferOutput<typeof MandateStateSchema>>;

/** The two authorization parameters to ask the customer for (docs/payments-api.md, "Resources > Activation challenge"). */
export const ActivationChallengeSchema: v.LooseObjectSchema<
  {
    readonly mandate_reference: v.StringSchema<undefined>;
    readonly param1: v.StringSchema<undefined>;
    readonly value1: v.StringSchema<undefined>;
    readonly param2: v.StringSchema<undefined>;
    readonly value2: v.StringSchema<undefined>;
  },
  undefined
> = v.looseObject({
  mandate_reference: v.string(),
  param1: v.string(),
  value1: v.string(),
  param2: v.string(),
  value2: v.string(),
});

/** An activation challenge. */
export type ActivationChallenge = Open<v.InferOutput<typeof ActivationChallengeSchema>>;

/** A debit on a mandate (processing, success, failed, or a newer state). Amount in major units. */
export const DebitSchema: v.LooseObjectSchema<
  {
    readonly payment_reference: v.StringSchema<undefined>;
    readonly mandate_reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly debit_amount: Optional<typeof ResponseAmount>;
    readonly narration: typeof OptionalText;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  payment_reference: v.string(),
  mandate_reference: v.string(),
  status: v.string(),
  debit_amount: v.optional(ResponseAmount),
  narration: OptionalText,
  created_at: OptionalText,
  updated_at: OptionalText,
});

/** A direct debit transaction (docs/payments-api.md, "Resources > Direct debit transaction"). */
export type Debit = Open<v.InferOutput<typeof DebitSchema>>;
