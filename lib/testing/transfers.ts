// Transfers (docs/payments-api.md, "Endpoints > Transfers", "States > Transfer").
import { toMajorUnits, toMinorUnits } from '../money.ts';
import type { DisburseParams } from '../schemas/direct-debits.ts';
import {
  InitializeTransferRequestSchema,
  ListDisbursementsQuerySchema,
} from '../schemas/transfers.ts';
import { creditBalance, debitBalance, requireAccountCurrency } from './balance.ts';
import type { SandboxCore } from './core.ts';
import { transferFeeMinor } from './fees.ts';
import { duplicateReference, notFoundError } from './http-error.ts';
import { listPage, pageFields, sameEmail } from './lists.ts';
import { beforeChange, recordCreated, shown, shownAll } from './record-faults.ts';
import { param, parseQuery, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { Metadata, TransferRecord } from './state.ts';

/** Destination accounts with a fixed outcome (magic values, docs/sandbox.md). */
const MAGIC_ACCOUNTS = {
  fails: '0000000000',
  expires: '0000000001',
  reversed: '0000000002',
} as const;

/** What {@link createTransfer} needs; amounts in minor units. */
export interface NewTransfer {
  reference: string;
  amountMinor: number;
  currency: string;
  bankCode: string;
  bankAccount: string;
  bankName: string | null;
  customerName: string | null;
  customerEmail: string | null;
  narration: string | null;
  metadata: Metadata;
  webhookUrl: string | undefined;
}

/**
 * A {@link NewTransfer} from the transfer fields a request body names: the Transfers
 * body and the Direct debit disburse body share them.
 *
 * @param body - the parsed body; amount in major units.
 * @param recipient - what only some bodies carry (customer, metadata, webhook_url).
 */
export function newTransfer(
  body: DisburseParams,
  recipient: Pick<NewTransfer, 'customerName' | 'customerEmail' | 'metadata' | 'webhookUrl'>,
): NewTransfer {
  return {
    reference: body.reference,
    amountMinor: toMinorUnits(body.amount),
    currency: body.currency,
    bankCode: body.destination_bank_code,
    bankAccount: body.destination_bank_account,
    bankName: body.destination_bank_name ?? null,
    customerName: recipient.customerName,
    customerEmail: recipient.customerEmail,
    narration: body.narration ?? null,
    metadata: recipient.metadata,
    webhookUrl: recipient.webhookUrl,
  };
}

/**
 * Creates a processing transfer, debiting amount + fee from the balance, and schedules
 * its settlement `settleAfterSec` later (sandbox time). All or nothing.
 *
 * @throws {SandboxHttpError} 400 on another currency; 409 `duplicate_reference`;
 *   409 `insufficient_funds` "Insufficient funds".
 */
export function createTransfer(core: SandboxCore, input: NewTransfer): TransferRecord {
  requireAccountCurrency(core, input.currency);
  if (core.state.transfers.has(input.reference)) throw duplicateReference('Transfer reference');
  const feeMinor = transferFeeMinor(input.amountMinor);
  debitBalance(core, input.amountMinor + feeMinor);
  const now = core.now();
  const transfer: TransferRecord = {
    ...input,
    feeMinor,
    status: 'processing',
    createdAt: now,
    updatedAt: now,
    completedAt: null,
  };
  core.state.transfers.set(transfer.reference, transfer);
  recordCreated(core, 'transfer', transfer.reference);
  core.schedule(now + core.options.settleAfterMs, 'transfer.settle', transfer.reference);
  return transfer;
}

/**
 * `POST /disbursements/initialize`: `{ status, message, data }` with the transfer's
 * `status: 'processing'`; flat variant `{ status: 'processing', message, reference }`.
 *
 * @throws 400 `validation_failed`; 409 `duplicate_reference`; 409 `insufficient_funds`.
 */
export function initializeTransfer(ctx: SandboxRequestContext): Response {
  const body = readJsonBody(ctx, InitializeTransferRequestSchema);
  const transfer = createTransfer(
    ctx.core,
    newTransfer(body, {
      customerName: body.customer_name,
      customerEmail: body.customer_email,
      metadata: body.metadata ?? {},
      webhookUrl: body.webhook_url,
    }),
  );
  const message = 'Transfer queued for processing';
  if (ctx.core.state.faults.variant === 'flat') {
    return json({ status: 'processing', message, reference: transfer.reference });
  }
  return json({ status: 'success', message, data: queuedTransferView(transfer, false) });
}

/**
 * `GET /disbursements/verify/{reference}`: `{ status, data: Transfer }`; flat variant
 * `{ status: <transfer status>, reference, amount, currency, destination_bank_account,
 * destination_bank_name, narration, completed_at }`.
 *
 * @throws 404 `not_found`.
 */
export function verifyTransfer(ctx: SandboxRequestContext): Response {
  const reference = param(ctx, 'reference');
  const transfer = shown(ctx.core, 'transfer', reference, ctx.core.state.transfers.get(reference));
  if (transfer === undefined) throw notFoundError('Transfer not found');
  if (ctx.core.state.faults.variant === 'flat') {
    return json({
      status: transfer.status,
      reference: transfer.reference,
      amount: toMajorUnits(transfer.amountMinor),
      currency: transfer.currency,
      destination_bank_account: transfer.bankAccount,
      destination_bank_name: transfer.bankName,
      narration: transfer.narration,
      completed_at: transfer.completedAt === null ? null : iso(transfer.completedAt),
    });
  }
  return json({ status: 'success', data: transferView(transfer) });
}

/** `GET /merchants/disbursements`: `{ status, data: { total, page, pageSize, data } }`. */
export function listDisbursements(ctx: SandboxRequestContext): Response {
  const query = parseQuery(ctx, ListDisbursementsQuerySchema);
  const page = listPage(
    shownAll(ctx.core, 'transfer', ctx.core.state.transfers.values(), (t) => t.reference),
    query,
    (t) =>
      (query.status === undefined || t.status === query.status) &&
      (query.customer_email === undefined ||
        (t.customerEmail !== null && sameEmail(t.customerEmail, query.customer_email))),
  );
  return json({
    status: 'success',
    data: { ...pageFields(page), data: page.items.map(transferView) },
  });
}

/**
 * Job `transfer.settle`: the bank's outcome. Destination `0000000000` fails and
 * `0000000001` expires (both refund amount + fee); `0000000002` succeeds and is
 * reversed `settleAfterSec` later; anything else succeeds. Emits
 * `disbursement_success`, `disbursement_failed` or `disbursement_expired`.
 */
export function settleTransfer(core: SandboxCore, reference: string, at: number): void {
  const transfer = core.state.transfers.get(reference);
  if (transfer === undefined || transfer.status !== 'processing') return;
  if (transfer.bankAccount === MAGIC_ACCOUNTS.fails) {
    finish(core, transfer, 'failed', at, 'Transfer failed');
  } else if (transfer.bankAccount === MAGIC_ACCOUNTS.expires) {
    finish(core, transfer, 'expired', at, 'Transfer expired before it could be processed');
  } else {
    finish(core, transfer, 'success', at, 'Transfer completed successfully');
    if (transfer.bankAccount === MAGIC_ACCOUNTS.reversed) {
      core.schedule(at + core.options.settleAfterMs, 'transfer.reverse', reference);
    }
  }
}

/** Job `transfer.reverse`: success -> reversed, amount + fee returned, `disbursement_reversed`. */
export function reverseTransfer(core: SandboxCore, reference: string, at: number): void {
  const transfer = core.state.transfers.get(reference);
  if (transfer === undefined || transfer.status !== 'success') return;
  finish(core, transfer, 'reversed', at, 'Transfer reversed by the bank');
}

function finish(
  core: SandboxCore,
  transfer: TransferRecord,
  status: 'success' | 'failed' | 'expired' | 'reversed',
  at: number,
  message: string,
): void {
  beforeChange(core, 'transfer', transfer.reference, transfer);
  transfer.status = status;
  transfer.updatedAt = at;
  if (status !== 'reversed') transfer.completedAt = at;
  if (status !== 'success') creditBalance(core, transfer.amountMinor + transfer.feeMinor);
  core.emit({
    type: status === 'success' ? 'disbursement_success' : `disbursement_${status}`,
    status,
    message,
    at,
    url: transfer.webhookUrl,
    data: {
      reference: transfer.reference,
      amount: toMajorUnits(transfer.amountMinor),
      currency: transfer.currency,
      metadata: transfer.metadata,
    },
  });
}

/**
 * A just-queued transfer as the creation responses echo it, major units; `fee` only when
 * `withFee` (`POST /direct-debits/disburse` shows it, `POST /disbursements/initialize` does not).
 */
export function queuedTransferView(
  transfer: TransferRecord,
  withFee: boolean,
): Record<string, unknown> {
  return {
    reference: transfer.reference,
    amount: toMajorUnits(transfer.amountMinor),
    ...(withFee ? { fee: toMajorUnits(transfer.feeMinor) } : {}),
    currency: transfer.currency,
    destination_bank_code: transfer.bankCode,
    destination_bank_account: transfer.bankAccount,
    destination_bank_name: transfer.bankName,
    narration: transfer.narration,
    status: transfer.status,
    created_at: iso(transfer.createdAt),
  };
}

/** The Transfer object that `transfers.verify` returns (docs/endpoints.md), major units. */
function transferView(transfer: TransferRecord): Record<string, unknown> {
  return {
    reference: transfer.reference,
    amount: toMajorUnits(transfer.amountMinor),
    fee: toMajorUnits(transfer.feeMinor),
    currency: transfer.currency,
    destination_bank_code: transfer.bankCode,
    destination_bank_account: transfer.bankAccount,
    destination_bank_name: transfer.bankName,
    customer_name: transfer.customerName,
    customer_email: transfer.customerEmail,
    narration: transfer.narration,
    transfer_status: transfer.status,
    metadata: transfer.metadata,
    created_at: iso(transfer.createdAt),
    updated_at: iso(transfer.updatedAt),
  };
}
