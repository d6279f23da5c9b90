/**
 * Valid request bodies for the sandbox contract tests, one builder per spec endpoint.
 * Each builder returns a fresh body with unique references; pass overrides to vary it.
 */

/** A unique reference for one test, e.g. `tr-3f9c1a2b-...`. */
export function uniqueRef(prefix: string): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

/** Body of POST /payments/initialize (docs/payments-api.md, "Endpoints > Payments"). */
export function paymentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    email: 'ada@example.com',
    amount: '5000.00',
    currency: 'NGN',
    reference: uniqueRef('pay'),
    ...overrides,
  };
}

/** Body of POST /disbursements/initialize (docs/payments-api.md, "Endpoints > Transfers"). */
export function transferBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: uniqueRef('tr'),
    amount: 2500.5,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
    narration: 'Payout',
    ...overrides,
  };
}

/** Body of POST /refunds/initialize (docs/payments-api.md, "Endpoints > Refunds"). */
export function refundBody(
  paymentReference: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    payment_reference: paymentReference,
    refund_reference: uniqueRef('rf'),
    currency: 'NGN',
    amount: 100,
    reason: 'Customer request',
    ...overrides,
  };
}

/** Body of POST /direct-debits/mandates (docs/payments-api.md, "Endpoints > Direct debit"); dates are YYYY-MM-DD. */
export function mandateBody(
  startDate: string,
  endDate: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    account_number: '0123456789',
    bank_code: '058',
    start_date: startDate,
    end_date: endDate,
    monthly_amount: 10000,
    monthly_debit_count: 3,
    ...overrides,
  };
}

/** Body of POST /virtual-accounts (docs/payments-api.md, "Endpoints > Virtual accounts"). */
export function virtualAccountBody(
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    account_reference: uniqueRef('va'),
    customer_name: 'Ada Obi',
    customer_email: `${uniqueRef('ada')}@example.com`,
    currency_code: 'NGN',
    bvn: '12345678901',
    metadata: { plan: 'gold' },
    ...overrides,
  };
}
