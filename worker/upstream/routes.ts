import type * as v from 'valibot';
import { ListBanksQuerySchema, ResolveAccountRequestSchema } from '../../lib/schemas/banks.ts';
import {
  CreateMandateRequestSchema,
  DebitRequestSchema,
  DisburseRequestSchema,
  ValidateActivationRequestSchema,
} from '../../lib/schemas/direct-debits.ts';
import {
  InitializePaymentRequestSchema,
  ListTransactionsQuerySchema,
} from '../../lib/schemas/payments.ts';
import {
  InitializeRefundRequestSchema,
  ListRefundsQuerySchema,
} from '../../lib/schemas/refunds.ts';
import {
  InitializeTransferRequestSchema,
  ListDisbursementsQuerySchema,
} from '../../lib/schemas/transfers.ts';
import {
  CreateVirtualAccountRequestSchema,
  ListVirtualAccountTransactionsQuerySchema,
  VirtualAccountByEmailRequestSchema,
} from '../../lib/schemas/virtual-accounts.ts';

/** HTTP methods the payment service uses (spec: Endpoints). */
export type HttpMethod = 'GET' | 'POST' | 'PATCH';

/**
 * Whether a route takes an `Idempotency-Key` (DESIGN 4.1): `required` on the POSTs that
 * create or move money, `optional` (honoured when given) on the other POSTs and PATCHes,
 * `none` on reads.
 */
export type IdempotencyPolicy = 'required' | 'optional' | 'none';

/** How the upstream request is authenticated: `signed` (spec: Authentication) or not at all. */
export type UpstreamAuth = 'signed' | 'none';

/** Which KV cache a route's answers go to (DESIGN 4.1): the bank list or account resolution. */
export type CachePolicy = 'banks' | 'resolve';

/**
 * The upstream path that finds the record a money-moving POST creates, from its JSON
 * body (`/disbursements/verify/<reference>`), already percent-encoded; `undefined` when
 * the body names none. Used to verify before resending a stale idempotent request.
 */
export type LookupPath = (body: Record<string, unknown>) => string | undefined;

/**
 * One endpoint of the spec, proxied with the same method and path. Routes are data:
 * the proxy pipeline reads them to decide what to do (validation, idempotency, caching,
 * allow-lists by `name`).
 */
export interface UpstreamRoute {
  /** Stable name for logs, allow-lists and metrics: `<sdk resource>.<method>`. */
  readonly name: string;
  readonly method: HttpMethod;
  /** itty-router pattern; `:param` segments are forwarded as received (still percent-encoded). */
  readonly pattern: `/${string}`;
  readonly idempotency: IdempotencyPolicy;
  readonly upstreamAuth: UpstreamAuth;
  /** The SDK's schema of the JSON body (lib/schemas), when the endpoint takes one. */
  readonly body: v.GenericSchema | undefined;
  /** The SDK's schema of the query string (values as strings), for list endpoints. */
  readonly query: v.GenericSchema | undefined;
  /** KV cache policy, for the bank list and account resolution. */
  readonly cache: CachePolicy | undefined;
  /** Where the record this POST creates can be looked up (verify before resend). */
  readonly lookup: LookupPath | undefined;
}

type RouteOptions = Partial<
  Pick<UpstreamRoute, 'idempotency' | 'upstreamAuth' | 'body' | 'query' | 'cache' | 'lookup'>
>;

function route(
  method: HttpMethod,
  pattern: UpstreamRoute['pattern'],
  name: string,
  options: RouteOptions = {},
): UpstreamRoute {
  return Object.freeze({
    name,
    method,
    pattern,
    idempotency: options.idempotency ?? (method === 'GET' ? 'none' : 'optional'),
    upstreamAuth: options.upstreamAuth ?? 'signed',
    body: options.body,
    query: options.query,
    cache: options.cache,
    lookup: options.lookup,
  });
}

const MONEY = { idempotency: 'required' } as const;

/** A lookup path built from one body field, percent-encoded as one segment. */
function lookupBy(prefix: string, field: string): LookupPath {
  return (body) => {
    const value = body[field];
    return typeof value === 'string' && value !== '' && value !== '.' && value !== '..'
      ? `${prefix}/${encodeURIComponent(value)}`
      : undefined;
  };
}

/**
 * Every endpoint of the spec (spec: Endpoints), in matching order: a literal segment
 * is listed before a `:param` that would also match it (`/refunds/count-by-status`
 * before `/refunds/:refund_reference`).
 */
export const UPSTREAM_ROUTES: readonly UpstreamRoute[] = Object.freeze([
  // spec: Payments
  route('POST', '/payments/initialize', 'payments.initialize', {
    ...MONEY,
    body: InitializePaymentRequestSchema,
    lookup: lookupBy('/payments/verify', 'reference'),
  }),
  route('GET', '/payments/verify/:reference', 'payments.verify'),
  route('GET', '/merchants/transactions', 'payments.list', { query: ListTransactionsQuerySchema }),
  // spec: Transfers
  route('POST', '/disbursements/initialize', 'transfers.initialize', {
    ...MONEY,
    body: InitializeTransferRequestSchema,
    lookup: lookupBy('/disbursements/verify', 'reference'),
  }),
  route('GET', '/disbursements/verify/:reference', 'transfers.verify'),
  route('GET', '/merchants/disbursements', 'transfers.list', {
    query: ListDisbursementsQuerySchema,
  }),
  // spec: Refunds
  route('POST', '/refunds/initialize', 'refunds.initialize', {
    ...MONEY,
    body: InitializeRefundRequestSchema,
    lookup: lookupBy('/refunds', 'refund_reference'),
  }),
  route('GET', '/refunds/count-by-status', 'refunds.countByStatus'),
  route('GET', '/refunds/transactions/:payment_reference', 'refunds.listForPayment'),
  route('GET', '/refunds/:refund_reference', 'refunds.retrieve'),
  route('GET', '/merchants/refunds', 'refunds.list', { query: ListRefundsQuerySchema }),
  // spec: Banks (GET /banks needs no authentication headers)
  route('GET', '/banks', 'banks.list', {
    upstreamAuth: 'none',
    query: ListBanksQuerySchema,
    cache: 'banks',
  }),
  route('POST', '/banks/resolve', 'banks.resolve', {
    body: ResolveAccountRequestSchema,
    cache: 'resolve',
  }),
  // spec: Direct debit
  route('POST', '/direct-debits/mandates', 'directDebits.mandates.create', {
    ...MONEY,
    body: CreateMandateRequestSchema,
  }),
  route(
    'POST',
    '/direct-debits/mandates/:mandate_reference/initiate-activation',
    'directDebits.mandates.initiateActivation',
  ),
  route(
    'POST',
    '/direct-debits/mandates/:mandate_reference/validate-activation',
    'directDebits.mandates.validateActivation',
    { body: ValidateActivationRequestSchema },
  ),
  route('GET', '/direct-debits/mandates/:mandate_reference', 'directDebits.mandates.retrieve'),
  route(
    'PATCH',
    '/direct-debits/mandates/:mandate_reference/cancel',
    'directDebits.mandates.cancel',
  ),
  route('POST', '/direct-debits/debit', 'directDebits.debit', {
    ...MONEY,
    body: DebitRequestSchema,
    lookup: lookupBy('/direct-debits/status', 'payment_reference'),
  }),
  route('POST', '/direct-debits/disburse', 'directDebits.disburse', {
    ...MONEY,
    body: DisburseRequestSchema,
  }),
  route('GET', '/direct-debits/status/:payment_reference', 'directDebits.status'),
  // spec: Virtual accounts
  route('POST', '/virtual-accounts', 'virtualAccounts.create', {
    ...MONEY,
    body: CreateVirtualAccountRequestSchema,
    lookup: lookupBy('/virtual-accounts', 'account_reference'),
  }),
  route('POST', '/virtual-accounts/email', 'virtualAccounts.findByEmail', {
    body: VirtualAccountByEmailRequestSchema,
  }),
  route('GET', '/virtual-accounts/:account_reference', 'virtualAccounts.retrieve'),
  route('GET', '/merchants/virtual-accounts/transactions', 'virtualAccounts.listTransactions', {
    query: ListVirtualAccountTransactionsQuerySchema,
  }),
]);
