// Test controls under /__sandbox/ (listed in docs/sandbox.md): unsigned, JSON, never faulted.
import * as v from 'valibot';
import { toMajorUnits } from '../money.ts';
import { PAYMENT_METHODS } from '../schemas/payments.ts';
import { FaultsControlSchema, faultConfig, faultView } from './faults.ts';
import { completePayment, findPayment, paymentView } from './payments.ts';
import { param, readControlBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import { settleDue } from './settlement.ts';
import { CreditControlSchema, creditVirtualAccount } from './virtual-accounts.ts';

/** Longest single clock advance: ten years, in seconds. */
const MAX_ADVANCE_SEC = 10 * 366 * 86_400;

const CompleteControlSchema = v.object({
  outcome: v.picklist(['success', 'failed', 'abandoned'], 'Expected success, failed or abandoned'),
  payment_method: v.optional(
    v.picklist(PAYMENT_METHODS, `Expected one of ${PAYMENT_METHODS.join(', ')}`),
  ),
});

const AdvanceControlSchema = v.object({
  seconds: v.pipe(
    v.number('Expected a number of seconds'),
    v.minValue(0, 'Expected seconds >= 0 (the clock never goes back)'),
    v.maxValue(MAX_ADVANCE_SEC, `Expected seconds <= ${MAX_ADVANCE_SEC}`),
  ),
});

/**
 * `POST /__sandbox/payments/{reference}/complete` `{ outcome, payment_method? }`:
 * settles a checkout as the customer would; answers `{ status, message, data: Payment }`.
 *
 * @throws 400 `validation_failed`; 404 `not_found`; 409 `payment_not_processing`.
 */
export function completePaymentControl(ctx: SandboxRequestContext): Response {
  const body = readControlBody(ctx, CompleteControlSchema);
  const payment = findPayment(ctx.core, param(ctx, 'reference'));
  completePayment(ctx.core, payment, body.outcome, body.payment_method);
  return json({
    status: 'success',
    message: `Payment ${payment.status}`,
    data: paymentView(payment, true),
  });
}

/**
 * `POST /__sandbox/clock/advance` `{ seconds }`: moves the sandbox clock forward and
 * settles what has come due; answers `{ status, message, data: { now, settled } }`.
 *
 * @throws 400 `validation_failed` for negative or absurd values.
 */
export function advanceClockControl(ctx: SandboxRequestContext): Response {
  const body = readControlBody(ctx, AdvanceControlSchema);
  ctx.core.state.clockOffsetMs += Math.round(body.seconds * 1000);
  const settled = settleDue(ctx.core);
  return json({
    status: 'success',
    message: `Clock advanced by ${body.seconds} s`,
    data: { now: iso(ctx.core.now()), settled },
  });
}

/**
 * `POST /__sandbox/virtual-accounts/{account_reference}/credit` `{ amount, sender_name?,
 * sender_bank?, narration? }`: an inbound transfer; answers `{ status, message, data: transaction }`.
 *
 * @throws 400 `validation_failed`; 404 `not_found`.
 */
export function creditControl(ctx: SandboxRequestContext): Response {
  const body = readControlBody(ctx, CreditControlSchema);
  const data = creditVirtualAccount(ctx.core, param(ctx, 'account_reference'), body);
  return json({ status: 'success', message: 'Virtual account credited', data });
}

/**
 * `POST /__sandbox/faults`: replaces the rate-based fault configuration. `{}` (or an
 * empty body) clears every fault: the rates, the variant and the timing fault rules of
 * `POST /__sandbox/faults/rules` (records they already hide or hold keep their windows).
 */
export function faultsControl(ctx: SandboxRequestContext): Response {
  const body = readControlBody(ctx, FaultsControlSchema);
  ctx.core.state.faults = faultConfig(body);
  if (Object.keys(body).length === 0) {
    ctx.core.state.faultRules = [];
    ctx.core.state.recordFaults.clear();
  }
  return json({ status: 'success', message: 'Faults set', data: faultView(ctx.core.state.faults) });
}

/**
 * `POST /__sandbox/reset`: empties all state (balance, clock offset, faults and fault
 * rules, webhook log and retry schedule, request log) and cancels pending deferred
 * commits, read lags and webhook retries.
 */
export function resetControl(ctx: SandboxRequestContext): Response {
  ctx.core.reset();
  return json({ status: 'success', message: 'Sandbox reset' });
}

/** `GET /__sandbox/state`: `{ now, balance, currency, counts }` (balance in major units). */
export function stateControl(ctx: SandboxRequestContext): Response {
  const { state } = ctx.core;
  return json({
    now: iso(ctx.core.now()),
    balance: toMajorUnits(state.balanceMinor),
    currency: ctx.core.options.currency,
    counts: {
      payments: state.payments.size,
      transfers: state.transfers.size,
      refunds: state.refunds.size,
      mandates: state.mandates.size,
      debits: state.debits.size,
      virtual_accounts: state.virtualAccounts.size,
      virtual_account_transactions: state.virtualAccountTransactions.length,
      webhooks: state.webhooks.length,
      pending_jobs: state.jobs.length,
      fault_rules: state.faultRules.length,
      pending_timers: ctx.core.timers.pending(),
    },
  });
}

/** `GET /__sandbox/webhooks`: `{ status, data: WebhookRecord[] }`, oldest first. */
export function webhooksControl(ctx: SandboxRequestContext): Response {
  return json({ status: 'success', data: ctx.core.state.webhooks });
}
