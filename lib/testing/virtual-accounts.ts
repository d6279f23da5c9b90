// Virtual accounts (docs/payments-api.md, "Endpoints > Virtual accounts").
import * as v from 'valibot';
import { toMajorUnits, toMinorUnits } from '../money.ts';
import { AmountSchema, textSchema } from '../schemas/common.ts';
import {
  CreateVirtualAccountRequestSchema,
  ListVirtualAccountTransactionsQuerySchema,
  VirtualAccountByEmailRequestSchema,
} from '../schemas/virtual-accounts.ts';
import { creditBalance, requireAccountCurrency } from './balance.ts';
import type { SandboxCore } from './core.ts';
import { virtualAccountNumber } from './hash.ts';
import { duplicateReference, notFoundError } from './http-error.ts';
import { listPage, newestFirst, pageFields, sameEmail } from './lists.ts';
import { recordCreated, shown, shownAll } from './record-faults.ts';
import { param, parseQuery, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { VirtualAccountRecord, VirtualAccountTransactionRecord } from './state.ts';

/** The partner bank issuing sandbox virtual accounts. */
const ISSUING_BANK = { name: 'Wema Bank', code: '035' } as const;

/** Event type of an inbound transfer to a virtual account (not named by the spec). */
const VIRTUAL_ACCOUNT_CREDIT_EVENT = 'virtual_account_credit';

/**
 * `POST /virtual-accounts`: provisions an `active` account with a 10-digit number and
 * answers the flat creation shape (docs/payments-api.md, "Resources > Virtual account").
 *
 * @throws 400 `validation_failed` (incl. a currency_code other than the account's);
 *   409 `duplicate_reference`.
 */
export function createVirtualAccount(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, CreateVirtualAccountRequestSchema);
  requireAccountCurrency(core, body.currency_code, 'currency_code');
  if (core.state.virtualAccounts.has(body.account_reference)) {
    throw duplicateReference('Virtual account reference');
  }
  const account: VirtualAccountRecord = {
    accountReference: body.account_reference,
    reservationReference: core.nextId('rsv'),
    accountNumber: virtualAccountNumber(body.account_reference, core.state.accountNumbers),
    bankName: ISSUING_BANK.name,
    bankCode: ISSUING_BANK.code,
    accountStatus: 'active',
    customerName: body.customer_name,
    customerEmail: body.customer_email,
    currencyCode: body.currency_code,
    metadata: body.metadata ?? {},
    createdAt: core.now(),
  };
  core.state.accountNumbers.add(account.accountNumber);
  core.state.virtualAccounts.set(account.accountReference, account);
  recordCreated(core, 'virtual_account', account.accountReference);
  return json({
    status: 'success',
    account_number: account.accountNumber,
    bank_name: account.bankName,
    bank_code: account.bankCode,
    account_reference: account.accountReference,
    reservation_reference: account.reservationReference,
    account_status: account.accountStatus,
    customer_name: account.customerName,
    customer_email: account.customerEmail,
  });
}

/**
 * `GET /virtual-accounts/{account_reference}`: `{ status, data: VirtualAccount }`.
 *
 * @throws 404 `not_found`.
 */
export function retrieveVirtualAccount(ctx: SandboxRequestContext): Response {
  const reference = param(ctx, 'account_reference');
  const stored = ctx.core.state.virtualAccounts.get(reference);
  const account = shown(ctx.core, 'virtual_account', reference, stored);
  if (account === undefined) throw notFoundError('Virtual account not found');
  return json({ status: 'success', data: virtualAccountView(account) });
}

/**
 * `POST /virtual-accounts/email`: the most recently created account of that customer
 * email (case-insensitive), as one object like the spec shows.
 *
 * @throws 400 `validation_failed`; 404 `not_found` when the email has no account.
 */
export function virtualAccountByEmail(ctx: SandboxRequestContext): Response {
  const body = readJsonBody(ctx, VirtualAccountByEmailRequestSchema);
  const accounts = ctx.core.state.virtualAccounts.values();
  const shownAccounts = shownAll(ctx.core, 'virtual_account', accounts, (a) => a.accountReference);
  const account = newestFirst(shownAccounts).find((a) => sameEmail(a.customerEmail, body.email));
  if (account === undefined) throw notFoundError('No virtual account for this email');
  return json({ status: 'success', data: virtualAccountView(account) });
}

/** `GET /merchants/virtual-accounts/transactions`: `{ status, total, page, pageSize, data }`. */
export function listVirtualAccountTransactions(ctx: SandboxRequestContext): Response {
  const query = parseQuery(ctx, ListVirtualAccountTransactionsQuerySchema);
  const page = listPage(
    ctx.core.state.virtualAccountTransactions,
    query,
    (t) =>
      (query.account_reference === undefined || t.accountReference === query.account_reference) &&
      (query.status === undefined || t.status === query.status),
  );
  return json({ status: 'success', ...pageFields(page), data: page.items.map(transactionView) });
}

/** Body of `POST /__sandbox/virtual-accounts/{account_reference}/credit`, an inbound transfer. */
export const CreditControlSchema = v.object({
  amount: AmountSchema,
  sender_name: v.optional(textSchema(200)),
  sender_bank: v.optional(textSchema(200)),
  narration: v.optional(textSchema(255)),
});

/**
 * An inbound transfer: records a `success` transaction, credits the merchant balance
 * and emits `virtual_account_credit` to the default webhook.
 *
 * @returns the transaction's JSON view.
 * @throws {SandboxHttpError} 404 `not_found` for an unknown account.
 */
export function creditVirtualAccount(
  core: SandboxCore,
  accountReference: string,
  body: v.InferOutput<typeof CreditControlSchema>,
): Record<string, unknown> {
  const account = findVirtualAccount(core, accountReference);
  const now = core.now();
  const transaction: VirtualAccountTransactionRecord = {
    transactionId: core.nextId('vat'),
    accountReference: account.accountReference,
    accountNumber: account.accountNumber,
    amountMinor: toMinorUnits(body.amount),
    currency: account.currencyCode,
    status: 'success',
    senderName: body.sender_name ?? 'SANDBOX SENDER',
    senderBank: body.sender_bank ?? 'Guaranty Trust Bank',
    narration: body.narration ?? `Transfer to ${account.accountNumber}`,
    metadata: account.metadata,
    createdAt: now,
    updatedAt: now,
  };
  core.state.virtualAccountTransactions.push(transaction);
  creditBalance(core, transaction.amountMinor);
  const view = transactionView(transaction);
  core.emit({
    type: VIRTUAL_ACCOUNT_CREDIT_EVENT,
    status: 'success',
    message: 'Virtual account credited',
    at: now,
    data: view,
  });
  return view;
}

function findVirtualAccount(core: SandboxCore, reference: string): VirtualAccountRecord {
  const account = core.state.virtualAccounts.get(reference);
  if (account === undefined) throw notFoundError('Virtual account not found');
  return account;
}

function virtualAccountView(account: VirtualAccountRecord): Record<string, unknown> {
  return {
    account_reference: account.accountReference,
    reservation_reference: account.reservationReference,
    account_number: account.accountNumber,
    bank_name: account.bankName,
    bank_code: account.bankCode,
    account_status: account.accountStatus,
    customer_name: account.customerName,
    customer_email: account.customerEmail,
    currency_code: account.currencyCode,
    metadata: account.metadata,
    created_at: iso(account.createdAt),
  };
}

function transactionView(transaction: VirtualAccountTransactionRecord): Record<string, unknown> {
  return {
    transaction_id: transaction.transactionId,
    account_reference: transaction.accountReference,
    account_number: transaction.accountNumber,
    amount: toMajorUnits(transaction.amountMinor),
    currency: transaction.currency,
    status: transaction.status,
    sender_name: transaction.senderName,
    sender_bank: transaction.senderBank,
    narration: transaction.narration,
    metadata: transaction.metadata,
    created_at: iso(transaction.createdAt),
    updated_at: iso(transaction.updatedAt),
  };
}
