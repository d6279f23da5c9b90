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

/**
 * One endpoint of the spec, proxied with the same method and path. Routes are data:
 * the proxy pipeline reads them to decide what to do (validation schemas, cache policy
 * and per-caller allow-lists are added here as fields in later issues).
 */
export interface UpstreamRoute {
  /** Stable name for logs, allow-lists and metrics: `<sdk resource>.<method>`. */
  readonly name: string;
  readonly method: HttpMethod;
  /** itty-router pattern; `:param` segments are forwarded as received (still percent-encoded). */
  readonly pattern: `/${string}`;
  readonly idempotency: IdempotencyPolicy;
  readonly upstreamAuth: UpstreamAuth;
}

type RouteOptions = Partial<Pick<UpstreamRoute, 'idempotency' | 'upstreamAuth'>>;

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
  });
}

const MONEY = { idempotency: 'required' } as const;

/**
 * Every endpoint of the spec (spec: Endpoints), in matching order: a literal segment
 * is listed before a `:param` that would also match it (`/refunds/count-by-status`
 * before `/refunds/:refund_reference`).
 */
export const UPSTREAM_ROUTES: readonly UpstreamRoute[] = Object.freeze([
  // spec: Payments
  route('POST', '/payments/initialize', 'payments.initialize', MONEY),
  route('GET', '/payments/verify/:reference', 'payments.verify'),
  route('GET', '/merchants/transactions', 'payments.list'),
  // spec: Transfers
  route('POST', '/disbursements/initialize', 'transfers.initialize', MONEY),
  route('GET', '/disbursements/verify/:reference', 'transfers.verify'),
  route('GET', '/merchants/disbursements', 'transfers.list'),
  // spec: Refunds
  route('POST', '/refunds/initialize', 'refunds.initialize', MONEY),
  route('GET', '/refunds/count-by-status', 'refunds.countByStatus'),
  route('GET', '/refunds/transactions/:payment_reference', 'refunds.listForPayment'),
  route('GET', '/refunds/:refund_reference', 'refunds.retrieve'),
  route('GET', '/merchants/refunds', 'refunds.list'),
  // spec: Banks (GET /banks needs no authentication headers)
  route('GET', '/banks', 'banks.list', { upstreamAuth: 'none' }),
  route('POST', '/banks/resolve', 'banks.resolve'),
  // spec: Direct debit
  route('POST', '/direct-debits/mandates', 'directDebits.mandates.create', MONEY),
  route(
    'POST',
    '/direct-debits/mandates/:mandate_reference/initiate-activation',
    'directDebits.mandates.initiateActivation',
  ),
  route(
    'POST',
    '/direct-debits/mandates/:mandate_reference/validate-activation',
    'directDebits.mandates.validateActivation',
  ),
  route('GET', '/direct-debits/mandates/:mandate_reference', 'directDebits.mandates.retrieve'),
  route(
    'PATCH',
    '/direct-debits/mandates/:mandate_reference/cancel',
    'directDebits.mandates.cancel',
  ),
  route('POST', '/direct-debits/debit', 'directDebits.debit', MONEY),
  route('POST', '/direct-debits/disburse', 'directDebits.disburse', MONEY),
  route('GET', '/direct-debits/status/:payment_reference', 'directDebits.status'),
  // spec: Virtual accounts
  route('POST', '/virtual-accounts', 'virtualAccounts.create', MONEY),
  route('POST', '/virtual-accounts/email', 'virtualAccounts.findByEmail'),
  route('GET', '/virtual-accounts/:account_reference', 'virtualAccounts.retrieve'),
  route('GET', '/merchants/virtual-accounts/transactions', 'virtualAccounts.listTransactions'),
]);
