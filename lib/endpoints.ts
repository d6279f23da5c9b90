// The payments API's endpoints as data (docs/endpoints.md): one entry per endpoint. The SDK's
// resources, the sandbox's router, the gateway's proxy routes, its idempotency and lookup
// rules, its OpenAPI document and docs/endpoints.md are all read from this table, so a fact
// about an endpoint is written once.
import * as v from 'valibot';
import { pickFields, RECOVERED_MESSAGE } from './internal/lookup.ts';
import {
  type Bank,
  BankSchema,
  type ResolvedAccount,
  ResolvedAccountSchema,
} from './responses/banks.ts';
import {
  type ActivationChallenge,
  ActivationChallengeSchema,
  type Debit,
  DebitSchema,
  type Mandate,
  MandateSchema,
  type MandateState,
  MandateStateSchema,
} from './responses/direct-debits.ts';
import { itemsOf, recordOf } from './responses/envelope.ts';
import {
  type Payment,
  PaymentSchema,
  type PaymentSession,
  PaymentSessionSchema,
} from './responses/payments.ts';
import {
  type Refund,
  type RefundCounts,
  RefundCountsSchema,
  RefundSchema,
} from './responses/refunds.ts';
import { type Transfer, TransferSchema } from './responses/transfers.ts';
import {
  type VirtualAccount,
  VirtualAccountSchema,
  type VirtualAccountTransaction,
  VirtualAccountTransactionSchema,
} from './responses/virtual-accounts.ts';
import { ListBanksQuerySchema, ResolveAccountRequestSchema } from './schemas/banks.ts';
import {
  CreateMandateRequestSchema,
  DebitRequestSchema,
  DisburseRequestSchema,
  ValidateActivationRequestSchema,
} from './schemas/direct-debits.ts';
import { InitializePaymentRequestSchema, ListTransactionsQuerySchema } from './schemas/payments.ts';
import { InitializeRefundRequestSchema, ListRefundsQuerySchema } from './schemas/refunds.ts';
import {
  InitializeTransferRequestSchema,
  ListDisbursementsQuerySchema,
} from './schemas/transfers.ts';
import {
  CreateVirtualAccountRequestSchema,
  ListVirtualAccountTransactionsQuerySchema,
  VirtualAccountByEmailRequestSchema,
} from './schemas/virtual-accounts.ts';

/** HTTP methods the payments API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH';

/**
 * What a call does to the merchant's account, which decides how it may be repeated:
 * - `read`: changes nothing (GETs, account resolution, lookup by email); safe to resend.
 * - `write`: changes state but moves no money (mandate activation, cancellation).
 * - `money`: creates or moves money, or creates what money moves through (payments,
 *   transfers, refunds, mandates, debits, disbursements, virtual accounts). The gateway
 *   requires an `Idempotency-Key` on these.
 */
export type Effect = 'read' | 'write' | 'money';

/**
 * Turns a response's parsed body into the candidate record the response schema checks:
 * unwraps the envelope, renames variant fields, fills what the response omits from the
 * request body that was sent (`undefined` for body-less calls).
 */
export type Shape = (answer: unknown, sent: Record<string, unknown> | undefined) => unknown;

/**
 * Where the record a `money` POST creates can be found afterwards: the read endpoint and
 * the body field holding the merchant reference it is found by, and whether the POST's
 * answer can be had back from that record. Used to verify before resending after an
 * ambiguous failure, by the SDK and by the gateway alike.
 *
 * @typeParam Out - the POST's record. A lookup that recovers answers must read that same
 *   record (the compiler checks it), since the SDK returns what it finds as the POST's.
 */
export type Lookup<Out = unknown> = LookupBy &
  (
    | {
        /** A `read` endpoint whose path has exactly one parameter, the reference. */
        readonly endpoint: Endpoint<Out>;
        /** Rebuilds the POST's response from the record found (a `Recover` function). */
        readonly recover: Recover;
      }
    | {
        /** A `read` endpoint whose path has exactly one parameter, the reference. */
        readonly endpoint: Endpoint;
        /** The POST's response cannot be had back from any read (`Recover`, above). */
        readonly recover: null;
      }
  );

/**
 * The POST's own success body rebuilt from the normalized record a lookup found (the shape
 * the payment service answers the POST with, e.g. `{ status, message, data }` for a
 * transfer). The caller of a call whose response was lost still expects that answer, not the
 * read's. A lookup whose response holds something no read gives back (a payment session's
 * single-use checkout address) has `recover: null` instead, and a call whose response was
 * lost then fails (the SDK's `PaymentsError`, the gateway's 409 `idempotency_answer_lost`)
 * instead of answering with the record. The field is required, so every lookup says
 * which. The SDK returns the record itself (its normalized response); the gateway answers
 * with this body.
 */
type Recover = (record: Readonly<Record<string, unknown>>) => unknown;

/** What every {@link Lookup} has: the reference's field and the fields that must agree. */
interface LookupBy {
  /** The request body field carrying the reference, e.g. `reference`, `refund_reference`. */
  readonly field: string;
  /**
   * The request body fields the record found must agree with (the record carries them
   * under the same names). A reference alone does not prove the record is this request's:
   * another request may have used it for another amount or destination. Fields named
   * `*amount` are compared as numbers (a decimal string and a number of the same value
   * agree), others as text ignoring case (`lookupMismatches` applies it).
   */
  readonly match: readonly string[];
}

/**
 * One endpoint of the payments API (docs/endpoints.md). Its name is its key in
 * {@link ENDPOINTS}.
 */
export interface Endpoint<Out = unknown> {
  /** HTTP method, as the service takes it. */
  readonly method: HttpMethod;
  /** Path with `:name` parameters, e.g. `/disbursements/verify/:reference`. */
  readonly path: `/${string}`;
  /** What the call does to the merchant's account, which decides how it may be repeated. */
  readonly effect: Effect;
  /**
   * `true` when requests go without the signature headers (only `GET /banks`;
   * docs/payments-api.md, "Authentication"); absent otherwise.
   */
  readonly unsigned?: true;
  /** valibot schema of the JSON body, for endpoints that take one. */
  readonly body?: v.GenericSchema;
  /**
   * valibot schema of the query string (values as strings), for endpoints that read one.
   * A list endpoint's query has `page` and `page_size`: its response is a page.
   */
  readonly query?: v.GenericSchema;
  /**
   * The normalized response: the record schema, or for a list (a query with `page`) the
   * schema of one item. Unknown fields are kept by the SDK.
   */
  readonly response: v.GenericSchema<unknown, Out>;
  /** Turns a record answer into the candidate record (see {@link Shape}). */
  readonly shape: Shape;
  /** How the record a `money` POST creates is found (verify before resend), if it can be. */
  readonly lookup?: Lookup<Out>;
}

type EndpointOptions<Out> = Partial<
  Pick<Endpoint<Out>, 'body' | 'query' | 'shape' | 'unsigned' | 'lookup'>
>;

function endpoint<Out>(
  method: HttpMethod,
  path: `/${string}`,
  effect: Effect,
  response: v.GenericSchema<unknown, Out>,
  options?: EndpointOptions<Out>,
): Endpoint<Out> {
  return { method, path, effect, response, shape: recordOf, ...options };
}

const MANDATE = '/direct-debits/mandates/:mandate_reference';

// docs/payments-api.md, "Endpoints > Payments"

/** `GET /payments/verify/{reference}`: one payment; `status` is its outcome. */
export const PAYMENTS_VERIFY: Endpoint<Payment> = endpoint(
  'GET',
  '/payments/verify/:reference',
  'read',
  PaymentSchema,
);
/** `POST /payments/initialize`: a payment session; the response is flat. */
export const PAYMENTS_INITIALIZE: Endpoint<PaymentSession> = endpoint(
  'POST',
  '/payments/initialize',
  'money',
  PaymentSessionSchema,
  {
    body: InitializePaymentRequestSchema,
    shape: (answer) => answer,
    lookup: {
      endpoint: PAYMENTS_VERIFY,
      field: 'reference',
      match: ['amount', 'currency'],
      // The session's checkout address is single-use and in no read.
      recover: null,
    },
  },
);
/** `GET /merchants/transactions`: payments, newest first, paged. */
export const PAYMENTS_LIST: Endpoint<Payment> = endpoint(
  'GET',
  '/merchants/transactions',
  'read',
  PaymentSchema,
  {
    query: ListTransactionsQuerySchema,
  },
);

// docs/payments-api.md, "Endpoints > Transfers"

/** `GET /disbursements/verify/{reference}`: one transfer, state from `transfer_status`. */
export const TRANSFERS_VERIFY: Endpoint<Transfer> = endpoint(
  'GET',
  '/disbursements/verify/:reference',
  'read',
  TransferSchema,
);
/** `POST /disbursements/initialize`: a transfer, completed from the request it answers. */
export const TRANSFERS_INITIALIZE: Endpoint<Transfer> = endpoint(
  'POST',
  '/disbursements/initialize',
  'money',
  TransferSchema,
  {
    body: InitializeTransferRequestSchema,
    shape: (answer, sent) => {
      const { webhook_url: _webhookUrl, ...fields } = sent ?? {};
      return { ...fields, amount: Number(fields.amount), ...(recordOf(answer) as object) };
    },
    lookup: {
      endpoint: TRANSFERS_VERIFY,
      field: 'reference',
      match: ['amount', 'currency', 'destination_bank_code', 'destination_bank_account'],
      recover: (record) => ({
        status: 'success',
        message: RECOVERED_MESSAGE,
        data: pickFields(record, [
          'reference',
          'amount',
          'currency',
          'destination_bank_code',
          'destination_bank_account',
          'destination_bank_name',
          'narration',
          'status',
          'created_at',
        ]),
      }),
    },
  },
);
/** `GET /merchants/disbursements`: transfers, newest first, paged. */
export const TRANSFERS_LIST: Endpoint<Transfer> = endpoint(
  'GET',
  '/merchants/disbursements',
  'read',
  TransferSchema,
  {
    query: ListDisbursementsQuerySchema,
  },
);

// docs/payments-api.md, "Endpoints > Refunds"

/** `GET /refunds/{refund_reference}`: one refund, state from `refund_status`. */
export const REFUNDS_RETRIEVE: Endpoint<Refund> = endpoint(
  'GET',
  '/refunds/:refund_reference',
  'read',
  RefundSchema,
);
/** `POST /refunds/initialize`: a refund, queued (`processing`), completed from the request. */
export const REFUNDS_INITIALIZE: Endpoint<Refund> = endpoint(
  'POST',
  '/refunds/initialize',
  'money',
  RefundSchema,
  {
    body: InitializeRefundRequestSchema,
    // The response's `status` is the call's ("success") or "processing": a new refund is queued.
    shape: (answer, sent) => ({
      ...sent,
      amount: Number(sent?.amount),
      ...(recordOf(answer) as object),
      status: 'processing',
    }),
    lookup: {
      endpoint: REFUNDS_RETRIEVE,
      field: 'refund_reference',
      match: ['payment_reference', 'amount', 'currency'],
      recover: (record) => ({
        status: 'success',
        message: RECOVERED_MESSAGE,
        ...pickFields(record, ['refund_reference', 'payment_reference']),
      }),
    },
  },
);
/** `GET /refunds/count-by-status`: counts keyed by state, enveloped or not. */
export const REFUNDS_COUNT_BY_STATUS: Endpoint<RefundCounts> = endpoint(
  'GET',
  '/refunds/count-by-status',
  'read',
  RefundCountsSchema,
  {
    shape: (answer) => {
      const { status: _status, ...counts } = recordOf(answer) as Record<string, unknown>;
      return counts;
    },
  },
);
/** `GET /refunds/transactions/{payment_reference}`: every refund of one payment. */
export const REFUNDS_LIST_FOR_PAYMENT: Endpoint<Refund[]> = endpoint(
  'GET',
  '/refunds/transactions/:payment_reference',
  'read',
  v.array(RefundSchema),
  { shape: itemsOf },
);
/** `GET /merchants/refunds`: refunds, newest first, paged. */
export const REFUNDS_LIST: Endpoint<Refund> = endpoint(
  'GET',
  '/merchants/refunds',
  'read',
  RefundSchema,
  {
    query: ListRefundsQuerySchema,
  },
);

// docs/payments-api.md, "Endpoints > Banks"

/** `GET /banks`: the banks of a country; sent unsigned. */
export const BANKS_LIST: Endpoint<Bank[]> = endpoint('GET', '/banks', 'read', v.array(BankSchema), {
  query: ListBanksQuerySchema,
  shape: itemsOf,
  unsigned: true,
});
/** `POST /banks/resolve`: an account holder's name; a read despite the POST. */
export const BANKS_RESOLVE: Endpoint<ResolvedAccount> = endpoint(
  'POST',
  '/banks/resolve',
  'read',
  ResolvedAccountSchema,
  {
    body: ResolveAccountRequestSchema,
  },
);

// docs/payments-api.md, "Endpoints > Direct debit"

/** `POST /direct-debits/mandates`: a mandate, `pending`; it has no merchant reference to look up. */
export const MANDATES_CREATE: Endpoint<Mandate> = endpoint(
  'POST',
  '/direct-debits/mandates',
  'money',
  MandateSchema,
  {
    body: CreateMandateRequestSchema,
  },
);
/** `POST .../initiate-activation`: the activation challenge; no body. */
export const MANDATES_INITIATE_ACTIVATION: Endpoint<ActivationChallenge> = endpoint(
  'POST',
  `${MANDATE}/initiate-activation`,
  'write',
  ActivationChallengeSchema,
);
/** `POST .../validate-activation`: the customer's answers; the mandate becomes `active`. */
export const MANDATES_VALIDATE_ACTIVATION: Endpoint<MandateState> = endpoint(
  'POST',
  `${MANDATE}/validate-activation`,
  'write',
  MandateStateSchema,
  { body: ValidateActivationRequestSchema },
);
/** `GET /direct-debits/mandates/{mandate_reference}`: one mandate. */
export const MANDATES_RETRIEVE: Endpoint<Mandate> = endpoint('GET', MANDATE, 'read', MandateSchema);
/** `PATCH .../cancel`: the mandate becomes `cancelled`; no body. */
export const MANDATES_CANCEL: Endpoint<MandateState> = endpoint(
  'PATCH',
  `${MANDATE}/cancel`,
  'write',
  MandateStateSchema,
);
/** `GET /direct-debits/status/{payment_reference}`: one debit. */
export const DEBITS_STATUS: Endpoint<Debit> = endpoint(
  'GET',
  '/direct-debits/status/:payment_reference',
  'read',
  DebitSchema,
);
/** `POST /direct-debits/debit`: a debit of an active mandate, `processing`. */
export const DEBITS_CREATE: Endpoint<Debit> = endpoint(
  'POST',
  '/direct-debits/debit',
  'money',
  DebitSchema,
  {
    body: DebitRequestSchema,
    lookup: {
      endpoint: DEBITS_STATUS,
      field: 'payment_reference',
      match: ['mandate_reference', 'debit_amount'],
      recover: (record) => ({
        status: 'success',
        message: RECOVERED_MESSAGE,
        data: pickFields(record, [
          'payment_reference',
          'mandate_reference',
          'debit_amount',
          'narration',
          'status',
        ]),
      }),
    },
  },
);
/** `POST /direct-debits/disburse`: collected funds to a bank account, as a transfer. */
export const DEBITS_DISBURSE: Endpoint<Transfer> = endpoint(
  'POST',
  '/direct-debits/disburse',
  'money',
  TransferSchema,
  { body: DisburseRequestSchema },
);

// docs/payments-api.md, "Endpoints > Virtual accounts"

/** `GET /virtual-accounts/{account_reference}`: one virtual account. */
export const VIRTUAL_ACCOUNTS_RETRIEVE: Endpoint<VirtualAccount> = endpoint(
  'GET',
  '/virtual-accounts/:account_reference',
  'read',
  VirtualAccountSchema,
);
/** `POST /virtual-accounts`: a virtual account; the flat response is completed from the request. */
export const VIRTUAL_ACCOUNTS_CREATE: Endpoint<VirtualAccount> = endpoint(
  'POST',
  '/virtual-accounts',
  'money',
  VirtualAccountSchema,
  {
    body: CreateVirtualAccountRequestSchema,
    shape: (answer, sent) => {
      const { bvn: _bvn, ...fields } = sent ?? {};
      // The flat creation response's `status` is the call's, not the account's.
      const { status: _status, ...account } = recordOf(answer) as Record<string, unknown>;
      return { ...fields, ...account };
    },
    lookup: {
      endpoint: VIRTUAL_ACCOUNTS_RETRIEVE,
      field: 'account_reference',
      match: ['customer_email', 'currency_code'],
      // The flat creation response carries no message.
      recover: (record) => ({
        status: 'success',
        ...pickFields(record, [
          'account_number',
          'bank_name',
          'bank_code',
          'account_reference',
          'reservation_reference',
          'account_status',
          'customer_name',
          'customer_email',
        ]),
      }),
    },
  },
);
/** `POST /virtual-accounts/email`: the account of an email; a read despite the POST. */
export const VIRTUAL_ACCOUNTS_FIND_BY_EMAIL: Endpoint<VirtualAccount> = endpoint(
  'POST',
  '/virtual-accounts/email',
  'read',
  VirtualAccountSchema,
  { body: VirtualAccountByEmailRequestSchema },
);
/** `GET /merchants/virtual-accounts/transactions`: inbound transfers, newest first, paged. */
export const VIRTUAL_ACCOUNTS_LIST_TRANSACTIONS: Endpoint<VirtualAccountTransaction> = endpoint(
  'GET',
  '/merchants/virtual-accounts/transactions',
  'read',
  VirtualAccountTransactionSchema,
  { query: ListVirtualAccountTransactionsQuerySchema },
);

/**
 * Every endpoint of the payments API (docs/endpoints.md) by its stable name,
 * `<resource>.<operation>`: the gateway's route name in logs, caller allow-lists and
 * OpenAPI `operationId`s. In the order routers try them: a literal path comes before a
 * `:param` path that would also match it (`/refunds/count-by-status` before
 * `/refunds/:refund_reference`). Adding an endpoint is one entry here plus its handler in
 * the sandbox (lib/testing/routes.ts); the gateway's proxy route, its OpenAPI operation and
 * docs/endpoints.md follow from it, and an SDK method is one line over it.
 *
 * @example
 * ```ts
 * for (const { name, method, path } of listEndpoints()) console.log(name, method, path);
 * ```
 */
export const ENDPOINTS = {
  /** `POST /payments/initialize` (docs/endpoints.md, `payments.initialize`). */
  'payments.initialize': PAYMENTS_INITIALIZE,
  /** `GET /payments/verify/:reference` (docs/endpoints.md, `payments.verify`). */
  'payments.verify': PAYMENTS_VERIFY,
  /** `GET /merchants/transactions` (docs/endpoints.md, `payments.list`). */
  'payments.list': PAYMENTS_LIST,
  /** `POST /disbursements/initialize` (docs/endpoints.md, `transfers.initialize`). */
  'transfers.initialize': TRANSFERS_INITIALIZE,
  /** `GET /disbursements/verify/:reference` (docs/endpoints.md, `transfers.verify`). */
  'transfers.verify': TRANSFERS_VERIFY,
  /** `GET /merchants/disbursements` (docs/endpoints.md, `transfers.list`). */
  'transfers.list': TRANSFERS_LIST,
  /** `POST /refunds/initialize` (docs/endpoints.md, `refunds.initialize`). */
  'refunds.initialize': REFUNDS_INITIALIZE,
  /** `GET /refunds/count-by-status` (docs/endpoints.md, `refunds.countByStatus`). */
  'refunds.countByStatus': REFUNDS_COUNT_BY_STATUS,
  /**
   * `GET /refunds/transactions/:payment_reference`
   * (docs/endpoints.md, `refunds.listForPayment`).
   */
  'refunds.listForPayment': REFUNDS_LIST_FOR_PAYMENT,
  /** `GET /refunds/:refund_reference` (docs/endpoints.md, `refunds.retrieve`). */
  'refunds.retrieve': REFUNDS_RETRIEVE,
  /** `GET /merchants/refunds` (docs/endpoints.md, `refunds.list`). */
  'refunds.list': REFUNDS_LIST,
  /** `GET /banks` (docs/endpoints.md, `banks.list`). */
  'banks.list': BANKS_LIST,
  /** `POST /banks/resolve` (docs/endpoints.md, `banks.resolve`). */
  'banks.resolve': BANKS_RESOLVE,
  /** `POST /direct-debits/mandates` (docs/endpoints.md, `directDebits.mandates.create`). */
  'directDebits.mandates.create': MANDATES_CREATE,
  /**
   * `POST /direct-debits/mandates/:mandate_reference/initiate-activation`
   * (docs/endpoints.md, `directDebits.mandates.initiateActivation`).
   */
  'directDebits.mandates.initiateActivation': MANDATES_INITIATE_ACTIVATION,
  /**
   * `POST /direct-debits/mandates/:mandate_reference/validate-activation`
   * (docs/endpoints.md, `directDebits.mandates.validateActivation`).
   */
  'directDebits.mandates.validateActivation': MANDATES_VALIDATE_ACTIVATION,
  /**
   * `GET /direct-debits/mandates/:mandate_reference`
   * (docs/endpoints.md, `directDebits.mandates.retrieve`).
   */
  'directDebits.mandates.retrieve': MANDATES_RETRIEVE,
  /**
   * `PATCH /direct-debits/mandates/:mandate_reference/cancel`
   * (docs/endpoints.md, `directDebits.mandates.cancel`).
   */
  'directDebits.mandates.cancel': MANDATES_CANCEL,
  /** `POST /direct-debits/debit` (docs/endpoints.md, `directDebits.debit`). */
  'directDebits.debit': DEBITS_CREATE,
  /** `POST /direct-debits/disburse` (docs/endpoints.md, `directDebits.disburse`). */
  'directDebits.disburse': DEBITS_DISBURSE,
  /** `GET /direct-debits/status/:payment_reference` (docs/endpoints.md, `directDebits.status`). */
  'directDebits.status': DEBITS_STATUS,
  /** `POST /virtual-accounts` (docs/endpoints.md, `virtualAccounts.create`). */
  'virtualAccounts.create': VIRTUAL_ACCOUNTS_CREATE,
  /** `POST /virtual-accounts/email` (docs/endpoints.md, `virtualAccounts.findByEmail`). */
  'virtualAccounts.findByEmail': VIRTUAL_ACCOUNTS_FIND_BY_EMAIL,
  /** `GET /virtual-accounts/:account_reference` (docs/endpoints.md, `virtualAccounts.retrieve`). */
  'virtualAccounts.retrieve': VIRTUAL_ACCOUNTS_RETRIEVE,
  /**
   * `GET /merchants/virtual-accounts/transactions`
   * (docs/endpoints.md, `virtualAccounts.listTransactions`).
   */
  'virtualAccounts.listTransactions': VIRTUAL_ACCOUNTS_LIST_TRANSACTIONS,
} as const satisfies Record<string, Endpoint>;

/** The name of an endpoint of {@link ENDPOINTS}, e.g. `transfers.initialize`. */
export type EndpointName = keyof typeof ENDPOINTS;

/** An endpoint with its name, as {@link listEndpoints} gives them. */
export interface NamedEndpoint extends Endpoint {
  /** Its key in {@link ENDPOINTS}. */
  readonly name: EndpointName;
}

/**
 * Every endpoint with its name, in the table's (matching) order.
 *
 * @returns a new array of `{ name, ...endpoint }`.
 */
export function listEndpoints(): NamedEndpoint[] {
  return Object.entries(ENDPOINTS).map(([name, endpoint]) => ({
    ...endpoint,
    name: name as EndpointName,
  }));
}

/**
 * Whether a call of `endpoint` through the gateway takes an `Idempotency-Key`: `required`
 * where it creates or moves money, `optional` (honoured when given) on its other POSTs and
 * PATCHes, `none` on GETs.
 *
 * @param endpoint - an entry of {@link ENDPOINTS}.
 * @returns the policy.
 */
export function idempotencyOf(endpoint: Endpoint): 'required' | 'optional' | 'none' {
  if (endpoint.effect === 'money') return 'required';
  return endpoint.method === 'GET' ? 'none' : 'optional';
}
