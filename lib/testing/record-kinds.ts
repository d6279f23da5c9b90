// The kinds of records the record faults act on, where each is stored and which route creates it.
import type { SandboxState } from './state.ts';

/** A kind of record a merchant reference names. */
export type RecordKind =
  | 'payment'
  | 'transfer'
  | 'refund'
  | 'debit'
  | 'mandate'
  | 'virtual_account';

/** The routes (`METHOD /path`, as in the endpoint table) creating each kind of record. */
const CREATION_ROUTES: Readonly<Record<RecordKind, readonly string[]>> = {
  payment: ['POST /payments/initialize'],
  transfer: ['POST /disbursements/initialize', 'POST /direct-debits/disburse'],
  refund: ['POST /refunds/initialize'],
  debit: ['POST /direct-debits/debit'],
  mandate: ['POST /direct-debits/mandates'],
  virtual_account: ['POST /virtual-accounts'],
};

/** The creation routes of some kinds, in table order. */
export function recordCreationRoutes(kinds: readonly RecordKind[]): string[] {
  return kinds.flatMap((kind) => CREATION_ROUTES[kind]);
}

/** Where each kind is stored, by its merchant reference. */
export function recordsOf(state: SandboxState, kind: RecordKind): Map<string, object> {
  switch (kind) {
    case 'payment':
      return state.payments;
    case 'transfer':
      return state.transfers;
    case 'refund':
      return state.refunds;
    case 'debit':
      return state.debits;
    case 'mandate':
      return state.mandates;
    case 'virtual_account':
      return state.virtualAccounts;
  }
}

/** Every kind, in a fixed order. */
export const RECORD_KINDS = Object.keys(CREATION_ROUTES) as RecordKind[];

/** The key of one record in the fault maps: kinds share references (a payment and its debit). */
export function recordKey(kind: RecordKind, reference: string): string {
  return `${kind}:${reference}`;
}
