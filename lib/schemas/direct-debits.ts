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
  /** The account holder's name (1 to 200 characters). */
  readonly customer_name: TextSchema;
  /** The account holder's email address. */
  readonly customer_email: typeof EmailSchema;
  /** The account to debit (6 to 20 digits). */
  readonly account_number: typeof AccountNumberSchema;
  /** The account's bank code (3 to 6 digits). */
  readonly bank_code: typeof BankCodeSchema;
  /** First day debits may happen, `YYYY-MM-DD` (in the future). */
  readonly start_date: typeof DateSchema;
  /** Last day, `YYYY-MM-DD`, at least 30 days after `start_date`. */
  readonly end_date: typeof DateSchema;
  /** Most that may be debited a month, in major units. */
  readonly monthly_amount: typeof AmountSchema;
  /** Most debits a month, 1 to 1000. */
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
    /** The mandate being activated (the same as in the path). */
    readonly mandate_reference: typeof ReferenceSchema;
    /** The name of the first answer, as initiate-activation gave it. */
    readonly param1: TextSchema;
    /** The customer's first answer. */
    readonly value1: TextSchema;
    /** The name of the second answer, as initiate-activation gave it. */
    readonly param2: TextSchema;
    /** The customer's second answer. */
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
    /** The active mandate to debit. */
    readonly mandate_reference: typeof ReferenceSchema;
    /** Major units, within the mandate's monthly amount. */
    readonly debit_amount: typeof AmountSchema;
    /** Text on the debit, for the customer. */
    readonly narration: TextSchema;
    /** The account holder's email address. */
    readonly customer_email: typeof EmailSchema;
    /** Your reference for this debit, unique per debit. */
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
    /** Your reference, unique like a transfer's. */
    readonly reference: typeof ReferenceSchema;
    /** Major units, at most 2 fraction digits. */
    readonly amount: typeof AmountSchema;
    /** ISO 4217 code in upper case, e.g. `NGN`. */
    readonly currency: typeof CurrencySchema;
    /** The recipient bank's code (3 to 6 digits). */
    readonly destination_bank_code: typeof BankCodeSchema;
    /** The account number (6 to 20 digits). */
    readonly destination_bank_account: typeof AccountNumberSchema;
    /** The recipient bank's name, as shown to people. */
    readonly destination_bank_name: Optional<TextSchema>;
    /** Text on the transfer, for the recipient. */
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
