/**
 * The gateway's own traffic for the live OpenAPI test: every operation of the document with
 * its success, and its errors (validation, credentials, unknown records, idempotency
 * conflicts, a service conflict, a wrong media type), sent to `npm start`'s stack over HTTP
 * and recorded as the client saw each answer.
 */
import { expect } from 'vitest';
import { signRequest } from '../../lib/index.ts';
import type { RecordedAnswer } from '../support/openapi-responses.ts';
import {
  mandateBody,
  paymentBody,
  refundBody,
  transferBody,
  uniqueRef,
  virtualAccountBody,
} from '../support/payloads.ts';

/** Where the stack listens and the credentials of its local settings. */
export interface TrafficOptions {
  readonly gatewayPort: number;
  readonly sandboxPort: number;
  readonly receiverPort: number;
  readonly callerToken: string;
  readonly adminToken: string;
  /** The merchant key id and secret the payment service signs its webhooks with. */
  readonly merchant: { readonly keyId: string; readonly secret: string };
}

type Json = Record<string, unknown>;

// One run at a time (the test file runs it once): the run's settings and what it recorded.
let traffic: TrafficOptions;
let answers: RecordedAnswer[] = [];

/**
 * Sends the traffic, in order: money (payments, transfers, refunds, banks), direct debit,
 * virtual accounts, the gateway's own routes, then every operation without credentials and
 * every path with a parameter on an unknown record.
 *
 * @param options - the stack's ports and credentials.
 * @param operations - every operation of the document, `<METHOD> <template>`.
 * @returns every answer, in the order received.
 */
export async function sendGatewayTraffic(
  options: TrafficOptions,
  operations: readonly string[],
): Promise<RecordedAnswer[]> {
  traffic = options;
  answers = [];
  await moveMoney();
  await directDebit();
  await virtualAccounts();
  await gatewayRoutes();
  await refusals(operations);
  return answers;
}

interface Call {
  readonly token?: string | null;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Calls the gateway and records the answer; returns its parsed JSON body (or `{}`). */
async function send(method: string, path: string, call: Call = {}): Promise<Json> {
  const { token = traffic.callerToken, body, headers = {} } = call;
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  const response = await fetch(`http://127.0.0.1:${traffic.gatewayPort}${path}`, {
    method,
    headers: {
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: text }),
  });
  const answer = {
    method,
    path: path.split('?')[0] ?? path,
    status: response.status,
    headers: response.headers,
    body: await response.text(),
  };
  answers.push(answer);
  return answer.body === '' ? {} : (JSON.parse(answer.body) as Json);
}

const admin = (method: string, path: string, call: Call = {}) =>
  send(method, path, { token: traffic.adminToken, ...call });
const keyed = (key = uniqueRef('key')) => ({ 'Idempotency-Key': key });
const dataOf = (answer: Json) => answer.data as Json;
/** A date `days` after today (UTC), `YYYY-MM-DD`. */
const dayFromNow = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function sandboxControl(path: string, body: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${traffic.sandboxPort}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status, path).toBe(200);
}

/** The payments, transfers and refunds of one merchant, each with its errors. */
async function moveMoney(): Promise<void> {
  const payment = paymentBody({ metadata: { order: 'A-1', items: [1, 2] } });
  const key = uniqueRef('key');
  await send('POST', '/payments/initialize', { body: payment, headers: keyed(key) });
  // The same key again is a replay; with another body it is refused.
  await send('POST', '/payments/initialize', { body: payment, headers: keyed(key) });
  await send('POST', '/payments/initialize', { body: paymentBody(), headers: keyed(key) });
  await send('POST', '/payments/initialize', { body: payment });
  await send('POST', '/payments/initialize', { body: { amount: -1 }, headers: keyed() });
  await send('POST', '/payments/initialize', {
    body: 'email=a',
    headers: { ...keyed(), 'Content-Type': 'text/plain' },
  });
  const reference = String(payment.reference);
  await sandboxControl(`/__sandbox/payments/${reference}/complete`, {
    outcome: 'success',
    payment_method: 'card',
  });
  await send('GET', `/payments/verify/${reference}`);
  await send('GET', '/merchants/transactions?page=1&page_size=5');
  await send('GET', '/merchants/transactions?page=0');

  const transfer = transferBody({ metadata: { batch: 7 } });
  await send('POST', '/disbursements/initialize', { body: transfer, headers: keyed() });
  await send('GET', `/disbursements/verify/${String(transfer.reference)}`);
  await send('GET', '/merchants/disbursements');

  const refund = refundBody(reference);
  await send('POST', '/refunds/initialize', { body: refund, headers: keyed() });
  await send('GET', '/refunds/count-by-status');
  await send('GET', `/refunds/transactions/${reference}`);
  await send('GET', `/refunds/${String(refund.refund_reference)}`);
  await send('GET', '/merchants/refunds');

  await send('GET', '/banks?country_code=NG');
  await send('GET', '/banks?country_code=NG');
  const account = { bank: '058', account: '0123456789', currency: 'NGN' };
  await send('POST', '/banks/resolve', { body: account });
  await send('POST', '/banks/resolve', { body: account });
}

/** A mandate from creation to cancellation, its debit and a disbursement. */
async function directDebit(): Promise<void> {
  const start = dayFromNow(2);
  const created = await send('POST', '/direct-debits/mandates', {
    body: mandateBody(start, dayFromNow(60)),
    headers: keyed(),
  });
  const mandate = String(dataOf(created).mandate_reference);
  const base = `/direct-debits/mandates/${mandate}`;
  const answers = { param1: 'otp', value1: '123456', param2: 'pin', value2: '1234' };
  // Not initiated yet: a conflict of the service.
  await send('POST', `${base}/validate-activation`, {
    body: { mandate_reference: mandate, ...answers },
  });
  await send('POST', `${base}/initiate-activation`);
  await send('POST', `${base}/validate-activation`, {
    body: { mandate_reference: mandate, ...answers },
  });
  await send('GET', base);
  // A mandate is debited from its start date on: the sandbox's clock moves there.
  await sandboxControl('/__sandbox/clock/advance', { seconds: 3 * 86_400 });
  const debit = uniqueRef('dd');
  await send('POST', '/direct-debits/debit', {
    body: {
      mandate_reference: mandate,
      debit_amount: 5000,
      narration: 'Plan',
      customer_email: 'ada@example.com',
      payment_reference: debit,
    },
    headers: keyed(),
  });
  await send('GET', `/direct-debits/status/${debit}`);
  await send('POST', '/direct-debits/disburse', {
    body: {
      reference: uniqueRef('db'),
      amount: 100,
      currency: 'NGN',
      destination_bank_code: '058',
      destination_bank_account: '0123456789',
    },
    headers: keyed(),
  });
  await send('PATCH', `${base}/cancel`);
}

async function virtualAccounts(): Promise<void> {
  const account = virtualAccountBody();
  await send('POST', '/virtual-accounts', { body: account, headers: keyed() });
  await send('POST', '/virtual-accounts/email', { body: { email: account.customer_email } });
  await send('GET', `/virtual-accounts/${String(account.account_reference)}`);
  await send('GET', '/merchants/virtual-accounts/transactions');
}

/** The gateway's own routes: health, the ingress and the admin API. */
async function gatewayRoutes(): Promise<void> {
  await send('GET', '/healthz', { token: null });
  await admin('GET', '/healthz?deep=1');
  await send('GET', '/openapi.json');

  const event = JSON.stringify({
    event_type: 'openapi_check',
    event_id: uniqueRef('evt'),
    timestamp: new Date().toISOString(),
    data: { reference: uniqueRef('ref') },
  });
  const signed = async (): Promise<Call> => ({
    token: null,
    body: event,
    headers: { ...(await signRequest({ ...traffic.merchant, body: event })) },
  });
  const ack = await send('POST', '/webhooks', await signed());
  await send('POST', '/webhooks', await signed());
  await send('POST', '/webhooks', { token: null, body: event });

  const created = await admin('POST', '/admin/subscriptions', {
    body: { url: `http://127.0.0.1:${traffic.receiverPort}/webhooks`, description: 'openapi' },
  });
  const subscription = `/admin/subscriptions/${String(dataOf(created).id)}`;
  await admin('GET', '/admin/subscriptions');
  await admin('GET', '/admin/event-types');
  // A misspelt event type: 400 with the closest known type suggested.
  await admin('POST', '/admin/subscriptions', {
    body: {
      url: `http://127.0.0.1:${traffic.receiverPort}/webhooks`,
      event_types: ['charge_succes'],
    },
  });
  await admin('GET', subscription);
  await admin('PATCH', subscription, { body: { description: 'renamed' } });
  await admin('PATCH', subscription, { body: {} });
  await admin('POST', `${subscription}/rotate-secret`);
  await admin('POST', `${subscription}/test`);
  await admin('GET', '/admin/events?page_size=5');
  const eventPath = `/admin/events/${String(ack.event_id)}`;
  await admin('GET', eventPath);
  await admin('POST', `${eventPath}/replay`);
  const deliveries = await admin('GET', '/admin/deliveries');
  await admin('GET', '/admin/deliveries/counts');
  await admin('GET', '/admin/deliveries/hourly?hours=3');
  const delivery = (deliveries.data as Json[])[0];
  await admin('POST', `/admin/deliveries/${String(delivery?.id ?? 'none')}/retry`);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  await admin('POST', '/admin/deliveries/recover/preview', { body: { since } });
  const recovery = await admin('POST', '/admin/deliveries/recover', {
    body: { since, operator: 'openapi' },
  });
  await admin('GET', `/admin/deliveries/recover/jobs/${String(dataOf(recovery).id)}`);
  await admin('GET', '/admin/deliveries/recover');
  await admin('POST', '/admin/deliveries/recover', { body: { since: 'yesterday' } });
  await admin('DELETE', subscription);
  await admin('GET', subscription);
}

/** Every operation without its credentials, and each path with a parameter on an unknown record. */
async function refusals(operations: readonly string[]): Promise<void> {
  for (const operation of operations) {
    const [method = 'GET', template = '/'] = operation.split(' ');
    const path = template.replace(/\{[^}]+\}/g, uniqueRef('unknown'));
    if (template === '/healthz') continue;
    await send(method, path, { token: template.startsWith('/admin/') ? 'wrong-token' : null });
    if (template.includes('{') && method === 'GET') {
      await send(method, path, {
        token: template.startsWith('/admin/') ? traffic.adminToken : traffic.callerToken,
      });
    }
  }
}
