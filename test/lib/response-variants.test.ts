/**
 * The response variants the spec shows for one resource (enveloped `{ status, data }`,
 * flat, list pages under `data.data`, `data.records` or the top level, bare arrays) are
 * normalized to the same record, field for field. Each variant is served as wire bytes by
 * a local HTTP server, and read through the real client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InitializeRefundRequest,
  type InitializeTransferRequest,
  PaymentsClient,
} from '../../lib/index.ts';
import { refundBody, transferBody } from '../support/payloads.ts';

let server: Server;
let sdk: PaymentsClient;
/** The body the server answers every request with. */
let answer: unknown;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sdk = new PaymentsClient({
    keyId: 'key',
    secret: 'secret',
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxRetries: 0,
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

// Every record carries a field no schema lists (`provider_note`): it is kept in every variant.
const PAYMENT = {
  reference: 'pay_1',
  transaction_id: 'tx_1',
  status: 'abandoned',
  amount: '2500.50',
  currency: 'NGN',
  customer_email: 'ada@example.com',
  metadata: { order: 7 },
  created_at: '2030-01-01T00:00:00.000Z',
  provider_note: 'kept',
};
// A transfer and a refund without their state, which the wire names per variant.
const TRANSFER = {
  reference: 'tr_1',
  amount: 5000,
  fee: 10,
  currency: 'NGN',
  destination_bank_account: '0123456789',
  completed_at: null,
  provider_note: 'kept',
};
const REFUND = {
  refund_reference: 'rf_1',
  payment_reference: 'pay_1',
  amount: '0.10',
  currency: 'NGN',
  created_at: '2030-01-01T00:00:00.000Z',
  provider_note: 'kept',
};
const ENVELOPE = { status: 'success', message: 'Done' };
const pageCounts = { total: 1, page: 1, pageSize: 10 };
const page = (items: unknown[]) => ({ ...pageCounts, data: items });

interface Row {
  /** The endpoint's name in the table (lib/endpoints.ts). */
  name: string;
  call: () => Promise<unknown>;
  /** Wire bodies by variant name; every one must normalize to the same value. */
  variants: Record<string, unknown>;
  /** What the normalized value holds, so equal-but-wrong results fail too. */
  expected: object;
}

const ROWS: Row[] = [
  {
    name: 'payments.verify',
    call: () => sdk.payments.verify('pay_1'),
    variants: { enveloped: { ...ENVELOPE, data: PAYMENT }, flat: { ...PAYMENT, message: 'Done' } },
    expected: { status: 'abandoned', amount: 2500.5, provider_note: 'kept' },
  },
  {
    name: 'transfers.initialize',
    call: () =>
      sdk.transfers.initialize(transferBody({ reference: 'tr_1' }) as InitializeTransferRequest),
    variants: {
      enveloped: { ...ENVELOPE, data: { reference: 'tr_1', status: 'processing' } },
      'enveloped, transfer_status': {
        ...ENVELOPE,
        data: { reference: 'tr_1', transfer_status: 'processing' },
      },
      flat: { status: 'processing', message: 'Queued', reference: 'tr_1' },
    },
    expected: {
      reference: 'tr_1',
      status: 'processing',
      amount: 2500.5,
      customer_name: 'Ada Obi',
    },
  },
  {
    name: 'transfers.verify',
    call: () => sdk.transfers.verify('tr_1'),
    variants: {
      enveloped: { status: 'success', data: { ...TRANSFER, transfer_status: 'reversed' } },
      flat: { status: 'reversed', ...TRANSFER },
    },
    expected: { status: 'reversed', provider_note: 'kept' },
  },
  {
    name: 'transfers.list',
    call: () => sdk.transfers.list().page(1),
    variants: {
      'top level': { status: 'success', ...page([{ ...TRANSFER, transfer_status: 'failed' }]) },
      'under data.data': {
        status: 'success',
        data: page([{ ...TRANSFER, transfer_status: 'failed' }]),
      },
      'under data.records': {
        status: 'success',
        data: { ...pageCounts, records: [{ ...TRANSFER, transfer_status: 'failed' }] },
      },
    },
    expected: { ...pageCounts, items: [{ status: 'failed', provider_note: 'kept' }] },
  },
  {
    name: 'refunds.initialize',
    call: () =>
      sdk.refunds.initialize(
        refundBody('pay_1', { refund_reference: 'rf_1' }) as InitializeRefundRequest,
      ),
    variants: {
      'call status': { ...ENVELOPE, refund_reference: 'rf_1', payment_reference: 'pay_1' },
      flat: { status: 'processing', refund_reference: 'rf_1', payment_reference: 'pay_1' },
      enveloped: {
        ...ENVELOPE,
        data: { refund_reference: 'rf_1', payment_reference: 'pay_1', refund_status: 'processing' },
      },
    },
    expected: { refund_reference: 'rf_1', status: 'processing', amount: 100 },
  },
  {
    name: 'refunds.retrieve',
    call: () => sdk.refunds.retrieve('rf_1'),
    variants: {
      enveloped: { status: 'success', data: { ...REFUND, refund_status: 'failed' } },
      flat: { status: 'failed', ...REFUND },
    },
    expected: { status: 'failed', amount: 0.1, provider_note: 'kept' },
  },
  {
    name: 'refunds.listForPayment',
    call: () => sdk.refunds.listForPayment('pay_1'),
    variants: {
      enveloped: { status: 'success', data: [{ ...REFUND, refund_status: 'success' }] },
      'bare array': [{ ...REFUND, refund_status: 'success' }],
    },
    expected: [{ refund_reference: 'rf_1', status: 'success', provider_note: 'kept' }],
  },
  {
    name: 'refunds.countByStatus',
    call: () => sdk.refunds.countByStatus(),
    variants: {
      enveloped: { status: 'success', data: { processing: 1, success: 2, failed: 0 } },
      flat: { processing: 1, success: 2, failed: 0 },
    },
    expected: { processing: 1, success: 2, failed: 0 },
  },
  {
    name: 'banks.list',
    call: () => sdk.banks.list(),
    variants: {
      enveloped: { status: 'success', data: [{ bank_name: 'GTBank', bank_code: '058' }] },
      'bare array': [{ bank_name: 'GTBank', bank_code: '058' }],
    },
    expected: [{ bank_name: 'GTBank', bank_code: '058' }],
  },
];

describe('response variants', () => {
  it.each(ROWS)('should normalize every variant of $name to the same value', async (row) => {
    const results: [string, unknown][] = [];
    for (const [variant, body] of Object.entries(row.variants)) {
      answer = body;
      results.push([variant, await row.call()]);
    }
    const [, first] = results[0] ?? [];
    expect(first).toMatchObject(row.expected);
    // The state has one name, `status`: the wire's transfer_status or refund_status is moved.
    expect(JSON.stringify(first)).not.toMatch(/"(transfer|refund)_status"/);
    for (const [variant, result] of results) {
      expect({ variant, result }).toStrictEqual({ variant, result: first });
    }
  });
});
