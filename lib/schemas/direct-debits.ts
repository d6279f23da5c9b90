// Request contract of the Direct debit section (docs/payments-api.md, "Endpoints > Direct debit").
import * as v from 'valibot';
import {
  AccountNumberSchema,
  AmountSchema,
  BankCodeSchema,
  type CheckedObjectSchema,
  CurrencySchema,
  crossFieldCheck,
  DateSchema,
  EmailSchema,
  type Optional,
  ReferenceSchema,
  type TextSchema,
  textSchema,
} from './common.ts';
import { addDays, isCalendarDate } from './dates.ts';

/** Minimum mandate duration: end_date at least this many days after start_date (docs/payments-api.md, "Limits"). */
const MIN_MANDATE_DAYS = 30;

/**
 * Body of `POST /direct-debits/mandates` (docs/endpoints.md, `directDebits.mandates.create`).
 * Dates are `YYYY-MM-DD`; end_date must be at least 30 days after start_date (checked
 * here). That start_date lies in the future depends on the service's clock, so the
 * service checks it. monthly_amount is in major units; monthly_debit_count 1..1000.
 */
export const CreateMandateRequestSchema: CheckedObjectSchema<{
  readonly customer_name: TextSchema;
  readonly customer_email: typeof EmailSchema;
  readonly account_number: typeof AccountNumberSchema;
  readonly bank_code: typeof BankCodeSchema;
  readonly start_date: typeof DateSchema;
  readonly end_date: typeof DateSchema;
  readonly monthly_amount: typeof AmountSchema;
  readonly monthly_debit_count: v.SchemaWithPipe<
    readonly [
      v.NumberSchema<undefined>,
      v.IntegerAction<number, undefined>,
      v.MinValueAction<number, 1, undefined>,
      v.MaxValueAction<number, 1000, undefined>,
    ]
  >;
}> = v.pipe(
  v.object({
    customer_name: textSchema(200),
    customer_email: EmailSchema,
    account_number: AccountNumberSchema,
    bank_code: BankCodeSchema,
    start_date: DateSchema,
    end_date: DateSchema,
    monthly_amount: AmountSchema,
    monthly_debit_count: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)),
  }),
  crossFieldCheck(
    ['start_date', 'end_date'],
    (input) =>
      !isCalendarDate(input.start_date) ||
      input.end_date >= addDays(input.start_date, MIN_MANDATE_DAYS),
    `Expected at least ${MIN_MANDATE_DAYS} days after start_date`,
  ),
);

/** Input of {@link CreateMandateRequestSchema}. */
export type CreateMandateRequest = v.InferInput<typeof CreateMandateRequestSchema>;

/**
 * Body of `POST /direct-debits/mandates/{mandate_reference}/validate-activation`
 * (docs/payments-api.md, "Endpoints > Direct debit"): the parameter names from initiate-activation and the
 * customer's answers. mandate_reference must equal the path value (checked by the service).
 */
export const ValidateActivationRequestSchema: v.ObjectSchema<
  {
    readonly mandate_reference: typeof ReferenceSchema;
    readonly param1: TextSchema;
    readonly value1: TextSchema;
    readonly param2: TextSchema;
    readonly value2: TextSchema;
  },
  undefined
> = v.object({
  mandate_reference: ReferenceSchema,
  param1: textSchema(50),
  value1: textSchema(100),
  param2: textSchema(50),
  value2: textSchema(100),
});

/** Input of {@link ValidateActivationRequestSchema}. */
export type ValidateActivationRequest = v.InferInput<typeof ValidateActivationRequestSchema>;

/**
 * Body of `POST /direct-debits/debit` (docs/endpoints.md, `directDebits.debit`).
 * debit_amount is in major units; payment_reference is unique per debit.
 */
export const DebitRequestSchema: v.ObjectSchema<
  {
    readonly mandate_reference: typeof ReferenceSchema;
    readonly debit_amount: typeof AmountSchema;
    readonly narration: TextSchema;
    readonly customer_email: typeof EmailSchema;
    readonly payment_reference: typeof ReferenceSchema;
  },
  undefined
> = v.object({
  mandate_reference: ReferenceSchema,
  debit_amount: AmountSchema,
  narration: textSchema(255),
  customer_email: EmailSchema,
  payment_reference: ReferenceSchema,
});

/** Input of {@link DebitRequestSchema}. */
export type DebitRequest = v.InferInput<typeof DebitRequestSchema>;

/**
 * Body of `POST /direct-debits/disburse` (docs/payments-api.md, "Endpoints > Direct debit";
 * the API shows no body, this is the sandbox's choice, see docs/assumptions.md): moves collected funds from the settlement
 * balance to a bank account, as a transfer with a unique `reference`.
 */
export const DisburseRequestSchema: v.ObjectSchema<
  {
    readonly reference: typeof ReferenceSchema;
    readonly amount: typeof AmountSchema;
    readonly currency: typeof CurrencySchema;
    readonly destination_bank_code: typeof BankCodeSchema;
    readonly destination_bank_account: typeof AccountNumberSchema;
    readonly destination_bank_name: Optional<TextSchema>;
    readonly narration: Optional<TextSchema>;
  },
  undefined
> = v.object({
  reference: ReferenceSchema,
  amount: AmountSchema,
  currency: CurrencySchema,
  destination_bank_code: BankCodeSchema,
  destination_bank_account: AccountNumberSchema,
  destination_bank_name: v.optional(textSchema(200)),
  narration: v.optional(textSchema(255)),
});

/** Output of {@link DisburseRequestSchema}. */
export type DisburseParams = v.InferOutput<typeof DisburseRequestSchema>;
