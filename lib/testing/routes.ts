// The sandbox's route table: every endpoint of the spec, the checkout page, the controls.
import { type EndpointName, listEndpoints } from '../endpoints.ts';
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
import { addFaultRuleControl, listFaultRulesControl } from './fault-rules.ts';
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
import { json } from './respond.ts';
import { type Handler, type Route, route } from './router.ts';
import { getRetriesControl, idleControl, setRetriesControl } from './timing-controls.ts';
import { initializeTransfer, listDisbursements, verifyTransfer } from './transfers.ts';
import {
  createVirtualAccount,
  listVirtualAccountTransactions,
  retrieveVirtualAccount,
  virtualAccountByEmail,
} from './virtual-accounts.ts';

/**
 * The sandbox's handler of every endpoint of the table, by name; the type demands one per
 * endpoint, so an endpoint cannot be added to the table without being emulated.
 */
const HANDLERS: Readonly<Record<EndpointName, Handler>> = {
  'payments.initialize': initializePayment,
  'payments.verify': verifyPayment,
  'payments.list': listTransactions,
  'transfers.initialize': initializeTransfer,
  'transfers.verify': verifyTransfer,
  'transfers.list': listDisbursements,
  'refunds.initialize': initializeRefund,
  'refunds.countByStatus': countRefundsByStatus,
  'refunds.listForPayment': listPaymentRefunds,
  'refunds.retrieve': retrieveRefund,
  'refunds.list': listRefunds,
  'banks.list': listBanks,
  'banks.resolve': resolveAccount,
  'directDebits.mandates.create': createMandate,
  'directDebits.mandates.initiateActivation': initiateActivation,
  'directDebits.mandates.validateActivation': validateActivation,
  'directDebits.mandates.retrieve': retrieveMandate,
  'directDebits.mandates.cancel': cancelMandate,
  'directDebits.debit': createDebit,
  'directDebits.disburse': disburse,
  'directDebits.status': debitStatus,
  'virtualAccounts.create': createVirtualAccount,
  'virtualAccounts.findByEmail': virtualAccountByEmail,
  'virtualAccounts.retrieve': retrieveVirtualAccount,
  'virtualAccounts.listTransactions': listVirtualAccountTransactions,
};

/**
 * Every route: the payments API's endpoints in the table's order (literal paths before
 * `:param` ones that could shadow them), then the checkout page and the test controls.
 */
export const SANDBOX_ROUTES: Route[] = [
  ...listEndpoints().map((endpoint) =>
    route(
      endpoint.method,
      endpoint.path,
      endpoint.unsigned ? 'public' : 'signed',
      HANDLERS[endpoint.name],
    ),
  ),
  // Hosted checkout
  route('GET', '/checkout/:reference', 'page', showCheckout),
  route('POST', '/checkout/:reference', 'page', submitCheckout),
  // Test controls (unsigned; docs/sandbox.md)
  route('POST', '/__sandbox/payments/:reference/complete', 'control', completePaymentControl),
  route('POST', '/__sandbox/clock/advance', 'control', advanceClockControl),
  route('POST', '/__sandbox/virtual-accounts/:account_reference/credit', 'control', creditControl),
  route('POST', '/__sandbox/faults', 'control', faultsControl),
  route('POST', '/__sandbox/faults/rules', 'control', addFaultRuleControl),
  route('GET', '/__sandbox/faults/rules', 'control', listFaultRulesControl),
  route('POST', '/__sandbox/reset', 'control', resetControl),
  route('GET', '/__sandbox/state', 'control', stateControl),
  route('GET', '/__sandbox/webhooks', 'control', webhooksControl),
  route('POST', '/__sandbox/webhooks/retries', 'control', setRetriesControl),
  route('GET', '/__sandbox/webhooks/retries', 'control', getRetriesControl),
  route('GET', '/__sandbox/idle', 'control', idleControl),
  route('GET', '/__sandbox/requests', 'control', requestsControl),
  route('GET', '/__sandbox', 'control', controlsIndex),
  route('GET', '/__sandbox/', 'control', controlsIndex),
];

/**
 * `GET /__sandbox/`: the index of the test controls, `{ status, data: [{ method, path }] }`
 * in the order above, with where they are described; what `npm start` and `edgepay sandbox`
 * print as the controls' address.
 */
function controlsIndex(): Response {
  const controls = SANDBOX_ROUTES.filter(
    (entry) => entry.access === 'control' && entry.handler !== controlsIndex,
  ).map((entry) => ({ method: entry.method, path: entry.pattern }));
  return json({
    status: 'success',
    message: 'Sandbox test controls: unsigned, never affected by injected faults (docs/sandbox.md)',
    data: controls,
  });
}
