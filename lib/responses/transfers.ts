// Canonical shape of the Transfers section (docs/payments-api.md, "Resources > Transfer", "Endpoints > Transfers").
import * as v from 'valibot';
import type { Optional } from '../schemas/common.ts';
import { type Open, OptionalMetadata, OptionalText, ResponseAmount } from './common.ts';
import { withStatusFrom } from './envelope.ts';

// The fields; the schema below first moves `transfer_status` to `status`.
const TransferFields: v.LooseObjectSchema<
  {
    readonly reference: v.StringSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
    readonly amount: Optional<typeof ResponseAmount>;
    readonly fee: Optional<typeof ResponseAmount>;
    readonly currency: Optional<v.StringSchema<undefined>>;
    readonly customer_name: typeof OptionalText;
    readonly customer_email: typeof OptionalText;
    readonly destination_bank_code: typeof OptionalText;
    readonly destination_bank_account: typeof OptionalText;
    readonly destination_bank_name: typeof OptionalText;
    readonly narration: typeof OptionalText;
    readonly metadata: typeof OptionalMetadata;
    readonly created_at: typeof OptionalText;
    readonly updated_at: typeof OptionalText;
    readonly completed_at: typeof OptionalText;
  },
  undefined
> = v.looseObject({
  reference: v.string(),
  status: v.string(),
  amount: v.optional(ResponseAmount),
  fee: v.optional(ResponseAmount),
  currency: v.optional(v.string()),
  customer_name: OptionalText,
  customer_email: OptionalText,
  destination_bank_code: OptionalText,
  destination_bank_account: OptionalText,
  destination_bank_name: OptionalText,
  narration: OptionalText,
  metadata: OptionalMetadata,
  created_at: OptionalText,
  updated_at: OptionalText,
  completed_at: OptionalText,
});

/**
 * A transfer whichever variant the service sent: `status` is the transfer's state
 * (`transfer_status` in verify and lists, `status` in initialize and the flat variants;
 * processing, success, failed, reversed, expired, or a newer value passed through).
 * Amounts in major units. Unknown fields are kept; `transfer_status` is not (it is `status`).
 */
export const TransferSchema: v.SchemaWithPipe<
  readonly [v.UnknownSchema, v.TransformAction<unknown, unknown>, typeof TransferFields]
> = v.pipe(
  v.unknown(),
  v.transform((record) => withStatusFrom(record, 'transfer_status')),
  TransferFields,
);

/** A transfer (docs/payments-api.md, "Resources > Transfer"). */
export type Transfer = Open<v.InferOutput<typeof TransferSchema>>;
