// Canonical shapes of the Payments section (docs/payments-api.md, "Resources > Payment", "Endpoints > Payments").
import * as v from 'valibot';
import type { Optional } from '../schemas/common.ts';
import { type Open, OptionalMetadata, OptionalText, ResponseAmount } from './common.ts';

/**
 * A payment (transaction) whichever variant the service sent (enveloped or flat verify,
 * list item). `status` is the payment's own state (success, processing, failed,
 * abandoned, reversed, expired, or a newer value passed through); `amount` and `fee`
 * are in major units. Unknown fields are kept.
 */
export const PaymentSchema: v.LooseObjectSchema<
  {
    readonly reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly transaction_id: Optional<v.StringSchema<undefined>>;
    readonly amount: Optional<typeof ResponseAmount>;
    readonly fee: Optional<typeof ResponseAmount>;
    readonly currency: Optional<v.StringSchema<undefined>>;
    readonly customer_email: typeof OptionalText;
    readonly payment_method: typeof OptionalText;
    readonly metadata: typeof OptionalMetadata;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  reference: v.string(),
  status: v.string(),
  transaction_id: v.optional(v.string()),
  amount: v.optional(ResponseAmount),
  fee: v.optional(ResponseAmount),
  currency: v.optional(v.string()),
  customer_email: OptionalText,
  payment_method: OptionalText,
  metadata: OptionalMetadata,
  created_at: OptionalText,
  updated_at: OptionalText,
});

/** A payment (docs/payments-api.md, "Resources > Payment"). */
export type Payment = Open<v.InferOutput<typeof PaymentSchema>>;

/** What `POST /payments/initialize` answers: the hosted checkout address (docs/payments-api.md, "Endpoints > Payments"). */
export const PaymentSessionSchema: v.LooseObjectSchema<
  {
    readonly reference: v.StringSchema<undefined>;
    readonly authorization_url: v.StringSchema<undefined>;
  },
  undefined
> = v.looseObject({
  reference: v.string(),
  /** Single use; expires after a short window. */
  authorization_url: v.string(),
});

/** A started payment session. */
export type PaymentSession = Open<v.InferOutput<typeof PaymentSessionSchema>>;
