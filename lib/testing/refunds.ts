// Refunds (docs/payments-api.md, "Endpoints > Refunds", "States > Refund").
import { toMajorUnits, toMinorUnits } from '../money.ts';
import { InitializeRefundRequestSchema, ListRefundsQuerySchema } from '../schemas/refunds.ts';
import { creditBalance, debitBalance } from './balance.ts';
import type { SandboxCore } from './core.ts';
import { invalidField, notFoundError, SandboxHttpError } from './http-error.ts';
import { listPage, newestFirst, pageFields } from './lists.ts';
import { findPayment, findShownPayment } from './payments.ts';
import { beforeChange, recordCreated, shown, shownAll } from './record-faults.ts';
import { param, parseQuery, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { RefundRecord } from './state.ts';

/** Refund destination account whose refund fails at settlement (sandbox magic value). */
const FAILING_REFUND_ACCOUNT = '0000000000';

/**
 * `POST /refunds/initialize`: queues a `processing` refund and debits its amount from
 * the merchant balance (returned if it fails). Answers `{ status: 'success', message,
 * refund_reference, payment_reference }`; flat variant `status: 'processing'`.
 *
 * @throws 400 `validation_failed` (incl. currency not the payment's);
 *   409 `refund_already_exists` "Refund already exists"; 404 `not_found` (payment);
 *   409 `payment_not_refundable` (payment not successful); 422 `refund_exceeds_payment`;
 *   409 `insufficient_funds`.
 */
export function initializeRefund(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, InitializeRefundRequestSchema);
  if (core.state.refunds.has(body.refund_reference)) {
    throw new SandboxHttpError(409, 'refund_already_exists', 'Refund already exists');
  }
  const payment = findPayment(core, body.payment_reference);
  // A fully refunded payment is `reversed`; it stays refundable so the sum rule answers.
  if (payment.status !== 'success' && payment.status !== 'reversed') {
    throw new SandboxHttpError(
      409,
      'payment_not_refundable',
      `Only a successful payment can be refunded (payment is ${payment.status})`,
    );
  }
  if (body.currency !== payment.currency) {
    throw invalidField('currency', `Must match the payment currency (${payment.currency})`);
  }
  const amountMinor = toMinorUnits(body.amount);
  if (refundedMinor(core, payment.reference) + amountMinor > payment.amountMinor) {
    throw new SandboxHttpError(
      422,
      'refund_exceeds_payment',
      'The sum of refunds would exceed the payment amount',
    );
  }
  debitBalance(core, amountMinor);
  const now = core.now();
  const refund: RefundRecord = {
    refundReference: body.refund_reference,
    paymentReference: payment.reference,
    currency: body.currency,
    amountMinor,
    reason: body.reason ?? null,
    accountNumber: body.account_number ?? null,
    bankCode: body.bank_code ?? null,
    status: 'processing',
    createdAt: now,
    updatedAt: now,
  };
  core.state.refunds.set(refund.refundReference, refund);
  recordCreated(core, 'refund', refund.refundReference);
  core.schedule(now + core.options.settleAfterMs, 'refund.settle', refund.refundReference);
  const flat = core.state.faults.variant === 'flat';
  return json({
    status: flat ? 'processing' : 'success',
    message: 'Refund queued for processing',
    refund_reference: refund.refundReference,
    payment_reference: refund.paymentReference,
  });
}

/**
 * `GET /refunds/{refund_reference}`: `{ status, data: Refund }`; flat variant the
 * refund's fields at top level with its state in `status`.
 *
 * @throws 404 `not_found`.
 */
export function retrieveRefund(ctx: SandboxRequestContext): Response {
  const reference = param(ctx, 'refund_reference');
  const refund = shown(ctx.core, 'refund', reference, ctx.core.state.refunds.get(reference));
  if (refund === undefined) throw notFoundError('Refund not found');
  const view = refundView(refund, true);
  if (ctx.core.state.faults.variant === 'flat') {
    const { refund_status, ...rest } = view;
    return json({ status: refund_status, ...rest });
  }
  return json({ status: 'success', data: view });
}

/**
 * `GET /refunds/transactions/{payment_reference}`: `{ status, data: Refund[] }`
 * (without updated_at), newest first.
 *
 * @throws 404 `not_found` when the payment does not exist.
 */
export function listPaymentRefunds(ctx: SandboxRequestContext): Response {
  const payment = findShownPayment(ctx.core, param(ctx, 'payment_reference'));
  const refunds = newestFirst(shownRefunds(ctx.core)).filter(
    (r) => r.paymentReference === payment.reference,
  );
  return json({ status: 'success', data: refunds.map((r) => refundView(r, false)) });
}

/** `GET /merchants/refunds`: `{ status, data: { total, page, pageSize, records } }`. */
export function listRefunds(ctx: SandboxRequestContext): Response {
  const query = parseQuery(ctx, ListRefundsQuerySchema);
  const page = listPage(
    shownRefunds(ctx.core),
    query,
    (r) =>
      (query.status === undefined || r.status === query.status) &&
      (query.payment_reference === undefined || r.paymentReference === query.payment_reference),
  );
  return json({
    status: 'success',
    data: { ...pageFields(page), records: page.items.map((r) => refundView(r, true)) },
  });
}

/** `GET /refunds/count-by-status`: `{ status, data: { processing, success, failed } }`; flat: the counts alone. */
export function countRefundsByStatus(ctx: SandboxRequestContext): Response {
  const counts = { processing: 0, success: 0, failed: 0 };
  for (const refund of shownRefunds(ctx.core)) counts[refund.status] += 1;
  if (ctx.core.state.faults.variant === 'flat') return json(counts);
  return json({ status: 'success', data: counts });
}

/**
 * Job `refund.settle`: a refund to account `0000000000` fails (amount returned to the
 * balance, `refund_failed`); others succeed (`refund_success`). When successful refunds
 * reach the payment amount, the payment becomes `reversed`.
 */
export function settleRefund(core: SandboxCore, reference: string, at: number): void {
  const refund = core.state.refunds.get(reference);
  if (refund === undefined || refund.status !== 'processing') return;
  const payment = core.state.payments.get(refund.paymentReference);
  const failed = refund.accountNumber === FAILING_REFUND_ACCOUNT;
  beforeChange(core, 'refund', refund.refundReference, refund);
  refund.status = failed ? 'failed' : 'success';
  refund.updatedAt = at;
  if (failed) creditBalance(core, refund.amountMinor);
  if (
    !failed &&
    payment !== undefined &&
    settledMinor(core, payment.reference) >= payment.amountMinor
  ) {
    payment.status = 'reversed';
    payment.updatedAt = at;
  }
  core.emit({
    type: failed ? 'refund_failed' : 'refund_success',
    status: refund.status,
    message: failed ? 'Refund failed' : 'Refund completed successfully',
    at,
    url: payment?.webhookUrl,
    data: {
      refund_reference: refund.refundReference,
      payment_reference: refund.paymentReference,
      amount: toMajorUnits(refund.amountMinor),
      currency: refund.currency,
      refund_status: refund.status,
    },
  });
}

/** The refunds as reads see them (record-faults.ts). */
function shownRefunds(core: SandboxCore): RefundRecord[] {
  return shownAll(core, 'refund', core.state.refunds.values(), (r) => r.refundReference);
}

/** Minor units of a payment's refunds that are processing or successful. */
function refundedMinor(core: SandboxCore, paymentReference: string): number {
  let sum = 0;
  for (const r of core.state.refunds.values()) {
    if (r.paymentReference === paymentReference && r.status !== 'failed') sum += r.amountMinor;
  }
  return sum;
}

function settledMinor(core: SandboxCore, paymentReference: string): number {
  let sum = 0;
  for (const r of core.state.refunds.values()) {
    if (r.paymentReference === paymentReference && r.status === 'success') sum += r.amountMinor;
  }
  return sum;
}

/** The spec's Refund object, major units; `updated_at` and `reason` only when `full`. */
function refundView(refund: RefundRecord, full: boolean): Record<string, unknown> {
  return {
    refund_reference: refund.refundReference,
    payment_reference: refund.paymentReference,
    currency: refund.currency,
    amount: toMajorUnits(refund.amountMinor),
    ...(full ? { reason: refund.reason } : {}),
    refund_status: refund.status,
    created_at: iso(refund.createdAt),
    ...(full ? { updated_at: iso(refund.updatedAt) } : {}),
  };
}
