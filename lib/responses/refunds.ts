// Canonical shapes of the Refunds section (docs/payments-api.md, "Resources > Refund", "Endpoints > Refunds").
import * as v from 'valibot';
import type { Optional } from '../schemas/common.ts';
import { type Open, OptionalText, ResponseAmount } from './common.ts';
import { withStatusFrom } from './envelope.ts';

// The fields; the schema below first moves `refund_status` to `status`.
const RefundFields: v.LooseObjectSchema<
  {
    readonly refund_reference: v.StringSchema<undefined>;
    readonly payment_reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly amount: Optional<typeof ResponseAmount>;
    readonly currency: Optional<v.StringSchema<undefined>>;
    readonly reason: typeof OptionalText;
    readonly account_number: typeof OptionalText;
    readonly bank_code: typeof OptionalText;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  refund_reference: v.string(),
  payment_reference: v.string(),
  status: v.string(),
  amount: v.optional(ResponseAmount),
  currency: v.optional(v.string()),
  reason: OptionalText,
  account_number: OptionalText,
  bank_code: OptionalText,
  created_at: OptionalText,
  updated_at: OptionalText,
});

/**
 * A refund whichever variant the service sent: `status` is the refund's state
 * (`refund_status`, or `status` in the flat variant; processing, success, failed, or a
 * newer value passed through). Amount in major units. Unknown fields are kept;
 * `refund_status` is not (it is `status`).
 */
export const RefundSchema: v.SchemaWithPipe<
  readonly [v.UnknownSchema, v.TransformAction<unknown, unknown>, typeof RefundFields]
> = v.pipe(
  v.unknown(),
  v.transform((record) => withStatusFrom(record, 'refund_status')),
  RefundFields,
);

/** A refund (docs/payments-api.md, "Resources > Refund"). */
export type Refund = Open<v.InferOutput<typeof RefundSchema>>;

// A count: a whole number.
type Count = v.SchemaWithPipe<
  readonly [v.NumberSchema<undefined>, v.IntegerAction<number, undefined>]
>;

/** Refund counts by state (docs/endpoints.md, `refunds.countByStatus`); other states are kept. */
export const RefundCountsSchema: v.LooseObjectSchema<
  {
    readonly processing: Count;
    readonly success: Count;
    readonly failed: Count;
  },
  undefined
> = v.looseObject({
  processing: v.pipe(v.number(), v.integer()),
  success: v.pipe(v.number(), v.integer()),
  failed: v.pipe(v.number(), v.integer()),
});

/** Refund counts by state. */
export type RefundCounts = Open<v.InferOutput<typeof RefundCountsSchema>>;
