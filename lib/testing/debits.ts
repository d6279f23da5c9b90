// Direct debits and disbursements (docs/payments-api.md, "Endpoints > Direct debit", "States > Direct debit transaction").
import { toMajorUnits, toMinorUnits } from '../money.ts';
import { DebitRequestSchema, DisburseRequestSchema } from '../schemas/direct-debits.ts';
import { creditBalance } from './balance.ts';
import type { SandboxCore } from './core.ts';
import { duplicateReference, invalidField, notFoundError, SandboxHttpError } from './http-error.ts';
import { sameEmail } from './lists.ts';
import { findMandate } from './mandates.ts';
import { beforeChange, recordCreated, shown } from './record-faults.ts';
import { param, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { DebitRecord, MandateRecord } from './state.ts';
import { createTransfer, newTransfer, queuedTransferView } from './transfers.ts';

/** Debits whose amount ends in `.13` are rejected by the bank (a magic value, docs/sandbox.md). */
const FAILING_DEBIT_CENTS = 13;

/**
 * `POST /direct-debits/debit`: queues a `processing` debit on an active mandate within
 * its dates and monthly limits (calendar month of sandbox time, UTC; processing and
 * successful debits count).
 *
 * @throws 400 `validation_failed` (incl. customer_email not the mandate's);
 *   409 `duplicate_reference`; 404 `not_found`; 409 `mandate_not_active` "Mandate is
 *   not active or authorized"; 422 `mandate_not_started`, `mandate_expired`,
 *   `monthly_limit_exceeded`.
 */
export function createDebit(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, DebitRequestSchema);
  if (core.state.debits.has(body.payment_reference))
    throw duplicateReference('Debit payment_reference');
  const mandate = findMandate(core, body.mandate_reference);
  if (mandate.status !== 'active') {
    throw new SandboxHttpError(409, 'mandate_not_active', 'Mandate is not active or authorized');
  }
  if (!sameEmail(body.customer_email, mandate.customerEmail)) {
    throw invalidField('customer_email', "Must match the mandate's customer email");
  }
  const today = core.today();
  if (today < mandate.startDate) {
    throw new SandboxHttpError(
      422,
      'mandate_not_started',
      `Mandate starts on ${mandate.startDate}`,
    );
  }
  if (today > mandate.endDate) {
    throw new SandboxHttpError(422, 'mandate_expired', `Mandate ended on ${mandate.endDate}`);
  }
  const amountMinor = toMinorUnits(body.debit_amount);
  const now = core.now();
  assertWithinMonthlyLimits(core, mandate, amountMinor, now);
  const debit: DebitRecord = {
    paymentReference: body.payment_reference,
    mandateReference: mandate.mandateReference,
    amountMinor,
    narration: body.narration,
    status: 'processing',
    createdAt: now,
    updatedAt: now,
  };
  core.state.debits.set(debit.paymentReference, debit);
  recordCreated(core, 'debit', debit.paymentReference);
  core.schedule(now + core.options.settleAfterMs, 'debit.settle', debit.paymentReference);
  return json({
    status: 'success',
    message: 'Debit queued for processing',
    data: debitView(debit, false),
  });
}

/**
 * `GET /direct-debits/status/{payment_reference}`: `{ status, data: Debit }`.
 *
 * @throws 404 `not_found`.
 */
export function debitStatus(ctx: SandboxRequestContext): Response {
  const reference = param(ctx, 'payment_reference');
  const debit = shown(ctx.core, 'debit', reference, ctx.core.state.debits.get(reference));
  if (debit === undefined) throw notFoundError('Debit not found');
  return json({ status: 'success', data: debitView(debit, true) });
}

/**
 * `POST /direct-debits/disburse` (body not shown by the spec; see
 * `DisburseRequestSchema`): a transfer from the settlement balance, with the transfer
 * fee, uniqueness, magic accounts and settlement of `POST /disbursements/initialize`;
 * it is verified and listed with the transfers.
 *
 * @throws 400 `validation_failed`; 409 `duplicate_reference`; 409 `insufficient_funds`.
 */
export function disburse(ctx: SandboxRequestContext): Response {
  const body = readJsonBody(ctx, DisburseRequestSchema);
  const transfer = createTransfer(
    ctx.core,
    newTransfer(body, {
      customerName: null,
      customerEmail: null,
      metadata: {},
      webhookUrl: undefined,
    }),
  );
  return json({
    status: 'success',
    message: 'Disbursement queued for processing',
    data: queuedTransferView(transfer, true),
  });
}

/**
 * Job `debit.settle`: an amount ending in `.13` fails (`direct_debit_failure`, nothing
 * collected); any other succeeds, credits the balance and emits `direct_debit_success`.
 */
export function settleDebit(core: SandboxCore, reference: string, at: number): void {
  const debit = core.state.debits.get(reference);
  if (debit === undefined || debit.status !== 'processing') return;
  const failed = debit.amountMinor % 100 === FAILING_DEBIT_CENTS;
  beforeChange(core, 'debit', debit.paymentReference, debit);
  debit.status = failed ? 'failed' : 'success';
  debit.updatedAt = at;
  if (!failed) creditBalance(core, debit.amountMinor);
  core.emit({
    type: failed ? 'direct_debit_failure' : 'direct_debit_success',
    status: debit.status,
    message: failed ? 'Debit rejected by the bank' : 'Debit collected successfully',
    at,
    data: {
      payment_reference: debit.paymentReference,
      mandate_reference: debit.mandateReference,
      debit_amount: toMajorUnits(debit.amountMinor),
      status: debit.status,
    },
  });
}

function assertWithinMonthlyLimits(
  core: SandboxCore,
  mandate: MandateRecord,
  amountMinor: number,
  now: number,
): void {
  const month = iso(now).slice(0, 7);
  let sum = amountMinor;
  let count = 1;
  for (const debit of core.state.debits.values()) {
    if (debit.mandateReference !== mandate.mandateReference || debit.status === 'failed') continue;
    if (iso(debit.createdAt).slice(0, 7) !== month) continue;
    sum += debit.amountMinor;
    count += 1;
  }
  if (sum > mandate.monthlyAmountMinor) {
    throw new SandboxHttpError(
      422,
      'monthly_limit_exceeded',
      `Debit exceeds the mandate's remaining monthly amount for ${month}`,
    );
  }
  if (count > mandate.monthlyDebitCount) {
    throw new SandboxHttpError(
      422,
      'monthly_limit_exceeded',
      `Debit exceeds the mandate's monthly debit count for ${month}`,
    );
  }
}

/** The spec's Direct debit transaction, major units; `created_at` and `updated_at` only when `full`. */
function debitView(debit: DebitRecord, full: boolean): Record<string, unknown> {
  return {
    payment_reference: debit.paymentReference,
    mandate_reference: debit.mandateReference,
    debit_amount: toMajorUnits(debit.amountMinor),
    narration: debit.narration,
    status: debit.status,
    ...(full ? { created_at: iso(debit.createdAt), updated_at: iso(debit.updatedAt) } : {}),
  };
}
