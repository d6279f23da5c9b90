// The sandbox's route table: every endpoint of the spec, the checkout page, the controls.
import { listBanks, resolveAccount } from './banks.ts';
import { showCheckout, submitCheckout } from './checkout-page.ts';
import {
  advanceClockControl,
  completePaymentControl,
  creditControl,
  faultsControl,
  resetControl,
  stateControl,
  webhooksControl,
} from './controls.ts';
import { createDebit, debitStatus, disburse } from './debits.ts';
import {
  cancelMandate,
  createMandate,
  initiateActivation,
  retrieveMandate,
  validateActivation,
} from './mandates.ts';
import { initializePayment, listTransactions, verifyPayment } from './payments.ts';
import {
  countRefundsByStatus,
  initializeRefund,
  listPaymentRefunds,
  listRefunds,
  retrieveRefund,
} from './refunds.ts';
import { requestsControl } from './request-log.ts';
import { type Route, route } from './router.ts';
import { initializeTransfer, listDisbursements, verifyTransfer } from './transfers.ts';
import {
  createVirtualAccount,
  listVirtualAccountTransactions,
  retrieveVirtualAccount,
  virtualAccountByEmail,
} from './virtual-accounts.ts';

const MANDATE = '/direct-debits/mandates/:mandate_reference';

/**
 * Every route, literal paths before `:param` ones that could shadow them
 * (`/refunds/count-by-status` before `/refunds/:refund_reference`).
 */
export const ROUTES: Route[] = [
  // Payments
  route('POST', '/payments/initialize', 'signed', initializePayment),
  route('GET', '/payments/verify/:reference', 'signed', verifyPayment),
  route('GET', '/merchants/transactions', 'signed', listTransactions),
  // Transfers
  route('POST', '/disbursements/initialize', 'signed', initializeTransfer),
  route('GET', '/disbursements/verify/:reference', 'signed', verifyTransfer),
  route('GET', '/merchants/disbursements', 'signed', listDisbursements),
  // Refunds
  route('POST', '/refunds/initialize', 'signed', initializeRefund),
  route('GET', '/refunds/count-by-status', 'signed', countRefundsByStatus),
  route('GET', '/refunds/transactions/:payment_reference', 'signed', listPaymentRefunds),
  route('GET', '/refunds/:refund_reference', 'signed', retrieveRefund),
  route('GET', '/merchants/refunds', 'signed', listRefunds),
  // Banks
  route('GET', '/banks', 'public', listBanks),
  route('POST', '/banks/resolve', 'signed', resolveAccount),
  // Direct debit
  route('POST', '/direct-debits/mandates', 'signed', createMandate),
  route('POST', `${MANDATE}/initiate-activation`, 'signed', initiateActivation),
  route('POST', `${MANDATE}/validate-activation`, 'signed', validateActivation),
  route('GET', MANDATE, 'signed', retrieveMandate),
  route('PATCH', `${MANDATE}/cancel`, 'signed', cancelMandate),
  route('POST', '/direct-debits/debit', 'signed', createDebit),
  route('POST', '/direct-debits/disburse', 'signed', disburse),
  route('GET', '/direct-debits/status/:payment_reference', 'signed', debitStatus),
  // Virtual accounts
  route('POST', '/virtual-accounts', 'signed', createVirtualAccount),
  route('POST', '/virtual-accounts/email', 'signed', virtualAccountByEmail),
  route('GET', '/virtual-accounts/:account_reference', 'signed', retrieveVirtualAccount),
  route(
    'GET',
    '/merchants/virtual-accounts/transactions',
    'signed',
    listVirtualAccountTransactions,
  ),
  // Hosted checkout
  route('GET', '/checkout/:reference', 'page', showCheckout),
  route('POST', '/checkout/:reference', 'page', submitCheckout),
  // Test controls (DESIGN 5)
  route('POST', '/__sandbox/payments/:reference/complete', 'control', completePaymentControl),
  route('POST', '/__sandbox/clock/advance', 'control', advanceClockControl),
  route('POST', '/__sandbox/virtual-accounts/:account_reference/credit', 'control', creditControl),
  route('POST', '/__sandbox/faults', 'control', faultsControl),
  route('POST', '/__sandbox/reset', 'control', resetControl),
  route('GET', '/__sandbox/state', 'control', stateControl),
  route('GET', '/__sandbox/webhooks', 'control', webhooksControl),
  route('GET', '/__sandbox/requests', 'control', requestsControl),
];
