// The hosted checkout page at authorization_url, a real HTML page with pay and cancel
// (docs/payments-api.md, "Endpoints > Payments").
import { path } from '../internal/path.ts';
import { formatMinorUnits } from '../money.ts';
import { PAYMENT_METHODS, type PaymentMethod } from '../schemas/payments.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { completePayment } from './payments.ts';
import { param, type SandboxRequestContext } from './request.ts';
import { iso } from './respond.ts';
import type { PaymentRecord } from './state.ts';

const METHOD_LABELS: Record<PaymentMethod, string> = {
  card: 'Card',
  bank_transfer: 'Bank transfer',
  ussd: 'USSD',
  direct_debit: 'Direct debit',
};

/**
 * `GET /checkout/{reference}`: the payment's amount, fee, currency, merchant and email
 * with Pay and Cancel buttons (an HTML form POSTing back here). A payment that is no
 * longer processing (used, failed, expired) answers 410; an unknown one 404.
 */
export function showCheckout(ctx: SandboxRequestContext): Response {
  const payment = ctx.core.state.payments.get(param(ctx, 'reference'));
  if (payment === undefined) return notFoundPage();
  if (payment.status !== 'processing') return gonePage(payment);
  const money = (minor: number) => `${escapeHtml(payment.currency)} ${formatMinorUnits(minor)}`;
  const total = payment.merchantBearsFees
    ? payment.amountMinor
    : payment.amountMinor + payment.feeMinor;
  const options = PAYMENT_METHODS.map(
    (method) => `<option value="${method}">${escapeHtml(METHOD_LABELS[method])}</option>`,
  ).join('');
  return htmlPage(
    'Sandbox checkout',
    `<dl>
<dt>Merchant</dt><dd>Sandbox merchant (${escapeHtml(ctx.core.options.keyId)})</dd>
<dt>Email</dt><dd>${escapeHtml(payment.customerEmail)}</dd>
<dt>Amount</dt><dd>${money(payment.amountMinor)}</dd>
<dt>Fee</dt><dd>${money(payment.merchantBearsFees ? 0 : payment.feeMinor)}</dd>
<dt>Total</dt><dd><strong>${money(total)}</strong></dd>
<dt>Reference</dt><dd>${escapeHtml(payment.reference)}</dd>
<dt>Expires</dt><dd><time datetime="${iso(payment.expiresAt)}">${iso(payment.expiresAt)}</time></dd>
</dl>
<form method="post" action="${escapeHtml(path`/checkout/${payment.reference}`)}">
<p><label for="payment_method">Payment method</label>
<select id="payment_method" name="payment_method">${options}</select></p>
<button class="pay" type="submit" name="action" value="pay">Pay ${money(total)}</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</form>
<p class="note">This is a sandbox: no real money moves.</p>`,
  );
}

/**
 * `POST /checkout/{reference}` (form `action=pay|cancel`, `payment_method`): pay ->
 * `success` (+ `charge_success`), cancel -> `abandoned`. Single use. Then 303 to
 * callback_url with `reference` appended, or a result page when there is none.
 */
export function submitCheckout(ctx: SandboxRequestContext): Response {
  const payment = ctx.core.state.payments.get(param(ctx, 'reference'));
  if (payment === undefined) return notFoundPage();
  if (payment.status !== 'processing') return gonePage(payment);
  const form = new URLSearchParams(new TextDecoder().decode(ctx.rawBody));
  const action = form.get('action');
  if (action !== 'pay' && action !== 'cancel') {
    return htmlPage('Checkout error', '<p>Choose Pay or Cancel.</p>', 400);
  }
  const method = PAYMENT_METHODS.find((m) => m === form.get('payment_method'));
  completePayment(ctx.core, payment, action === 'pay' ? 'success' : 'abandoned', method);
  if (payment.callbackUrl !== undefined) {
    const target = new URL(payment.callbackUrl);
    target.searchParams.append('reference', payment.reference);
    return new Response(null, { status: 303, headers: { Location: target.toString() } });
  }
  const paid = action === 'pay';
  return htmlPage(
    paid ? 'Payment successful' : 'Payment cancelled',
    `<p role="status">${paid ? 'Your payment was successful.' : 'You cancelled the payment.'}</p>
<p>Reference: ${escapeHtml(payment.reference)}</p>`,
  );
}

function notFoundPage(): Response {
  return htmlPage('Checkout not found', '<p>There is no checkout at this address.</p>', 404);
}

function gonePage(payment: PaymentRecord): Response {
  const reason =
    payment.status === 'expired'
      ? 'This checkout has expired.'
      : `This checkout has already been used (payment ${escapeHtml(payment.status)}).`;
  return htmlPage('Checkout unavailable', `<p>${reason}</p>`, 410);
}
