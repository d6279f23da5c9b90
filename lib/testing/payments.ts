// Payments (docs/payments-api.md, "Endpoints > Payments", "States > Payment").
import { path } from '../internal/path.ts';
import { toMajorUnits, toMinorUnits } from '../money.ts';
import {
  InitializePaymentRequestSchema,
  ListTransactionsQuerySchema,
  type PaymentMethod,
} from '../schemas/payments.ts';
import { creditBalance, requireAccountCurrency } from './balance.ts';
import type { SandboxCore } from './core.ts';
import { paymentFeeMinor } from './fees.ts';
import { duplicateReference, notFoundError, SandboxHttpError } from './http-error.ts';
import { listPage, pageFields, sameEmail } from './lists.ts';
import { beforeChange, recordCreated, shown, shownAll } from './record-faults.ts';
import { param, parseQuery, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { PaymentRecord } from './state.ts';

/** How long a checkout stays open before the payment expires: 30 minutes, in ms. */
const CHECKOUT_WINDOW_MS = 30 * 60 * 1000;

/** How a checkout ends (the checkout page, or `POST /__sandbox/payments/{reference}/complete`). */
export type CheckoutOutcome = 'success' | 'failed' | 'abandoned';

/**
 * `POST /payments/initialize`: creates a `processing` payment whose checkout is open
 * for {@link CHECKOUT_WINDOW_MS}, and answers `{ status, authorization_url, reference }`.
 *
 * @throws 400 `validation_failed`; 409 `duplicate_reference` for a reused reference.
 */
export function initializePayment(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, InitializePaymentRequestSchema);
  requireAccountCurrency(core, body.currency);
  const reference = body.reference ?? core.nextId('pay');
  if (core.state.payments.has(reference)) throw duplicateReference('Payment reference');
  const amountMinor = toMinorUnits(body.amount);
  const now = core.now();
  core.state.payments.set(reference, {
    reference,
    transactionId: core.nextId('txn'),
    status: 'processing',
    amountMinor,
    feeMinor: paymentFeeMinor(amountMinor),
    currency: body.currency,
    customerEmail: body.email,
    paymentMethod: null,
    metadata: body.metadata ?? {},
    callbackUrl: body.callback_url,
    webhookUrl: body.webhook_url,
    merchantBearsFees: body.merchant_bears_fees ?? false,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + CHECKOUT_WINDOW_MS,
  });
  recordCreated(core, 'payment', reference);
  core.schedule(now + CHECKOUT_WINDOW_MS, 'payment.expire', reference);
  const base = core.options.publicBaseUrl ?? ctx.url.origin;
  return json({
    status: 'success',
    authorization_url: `${base}${path`/checkout/${reference}`}`,
    reference,
  });
}

/**
 * `GET /payments/verify/{reference}`: `{ status, message, data: Payment }`, or in the
 * flat variant the payment's fields at top level with its state in `status`.
 *
 * @throws 404 `not_found`.
 */
export function verifyPayment(ctx: SandboxRequestContext): Response {
  const payment = findShownPayment(ctx.core, param(ctx, 'reference'));
  const view = paymentView(payment, false);
  if (ctx.core.state.faults.variant === 'flat') {
    return json({ ...view, message: 'Payment retrieved' });
  }
  return json({ status: 'success', message: 'Payment retrieved', data: view });
}

/** `GET /merchants/transactions`: `{ status, total, page, pageSize, data: Payment[] }` with fee. */
export function listTransactions(ctx: SandboxRequestContext): Response {
  const query = parseQuery(ctx, ListTransactionsQuerySchema);
  const page = listPage(
    shownAll(ctx.core, 'payment', ctx.core.state.payments.values(), (p) => p.reference),
    query,
    (p) =>
      (query.status === undefined || p.status === query.status) &&
      (query.payment_method === undefined || p.paymentMethod === query.payment_method) &&
      (query.customer_email === undefined || sameEmail(p.customerEmail, query.customer_email)),
  );
  return json({
    status: 'success',
    ...pageFields(page),
    data: page.items.map((p) => paymentView(p, true)),
  });
}

/**
 * Looks a payment up by reference.
 *
 * @throws {SandboxHttpError} 404 `not_found` "Payment not found".
 */
export function findPayment(core: SandboxCore, reference: string): PaymentRecord {
  const payment = core.state.payments.get(reference);
  if (payment === undefined) throw notFoundError('Payment not found');
  return payment;
}

/**
 * Looks a payment up as reads see it (record-faults.ts: hidden or lagging under a
 * timing fault).
 *
 * @throws {SandboxHttpError} 404 `not_found` "Payment not found".
 */
export function findShownPayment(core: SandboxCore, reference: string): PaymentRecord {
  const payment = shown(core, 'payment', reference, core.state.payments.get(reference));
  if (payment === undefined) throw notFoundError('Payment not found');
  return payment;
}

/**
 * Ends a processing payment's checkout: `success` credits the balance (net of the fee
 * when the merchant bears it) and emits `charge_success`; `failed` and `abandoned`
 * emit nothing.
 *
 * @param core - the sandbox.
 * @param payment - the payment.
 * @param outcome - how the checkout ended.
 * @param method - payment method used. @default 'card' (none when abandoned)
 * @throws {SandboxHttpError} 409 `payment_not_processing` when the payment is not processing.
 */
export function completePayment(
  core: SandboxCore,
  payment: PaymentRecord,
  outcome: CheckoutOutcome,
  method: PaymentMethod | undefined,
): void {
  if (payment.status !== 'processing') {
    throw new SandboxHttpError(
      409,
      'payment_not_processing',
      `Payment is already ${payment.status}`,
    );
  }
  const now = core.now();
  beforeChange(core, 'payment', payment.reference, payment);
  payment.status = outcome;
  payment.updatedAt = now;
  payment.paymentMethod = method ?? (outcome === 'abandoned' ? null : 'card');
  if (outcome !== 'success') return;
  creditBalance(core, payment.amountMinor - (payment.merchantBearsFees ? payment.feeMinor : 0));
  core.emit({
    type: 'charge_success',
    status: 'success',
    message: 'Payment completed successfully',
    at: now,
    url: payment.webhookUrl,
    data: {
      reference: payment.reference,
      amount: toMajorUnits(payment.amountMinor),
      currency: payment.currency,
      metadata: payment.metadata,
    },
  });
}

/**
 * Job `payment.expire`: a payment still processing when its checkout window closes
 * becomes `expired` (no webhook).
 */
export function expirePayment(core: SandboxCore, reference: string, at: number): void {
  const payment = core.state.payments.get(reference);
  if (payment === undefined || payment.status !== 'processing') return;
  payment.status = 'expired';
  payment.updatedAt = at;
}

/**
 * The Payment object that `payments.verify` returns (docs/endpoints.md): amounts in major
 * units; `payment_method` is null until the customer pays.
 *
 * @param payment - the record.
 * @param withFee - include `fee` (the transaction list does).
 */
export function paymentView(payment: PaymentRecord, withFee: boolean): Record<string, unknown> {
  return {
    reference: payment.reference,
    transaction_id: payment.transactionId,
    status: payment.status,
    amount: toMajorUnits(payment.amountMinor),
    ...(withFee ? { fee: toMajorUnits(payment.feeMinor) } : {}),
    currency: payment.currency,
    customer_email: payment.customerEmail,
    payment_method: payment.paymentMethod,
    metadata: payment.metadata,
    created_at: iso(payment.createdAt),
    updated_at: iso(payment.updatedAt),
  };
}
