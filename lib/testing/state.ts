// The sandbox's in-memory records. Amounts are integer minor units, times epoch
// milliseconds of sandbox time; serializers turn them into the spec's JSON shapes.
import type { PaymentMethod, PaymentStatus } from '../schemas/payments.ts';
import type { RefundStatus } from '../schemas/refunds.ts';
import type { TransferStatus } from '../schemas/transfers.ts';
import type { FaultRule } from './fault-rules.ts';
import type { AttachedFaults } from './record-faults.ts';
import type { RequestLogEntry } from './request-log.ts';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS, type WebhookRecord } from './webhooks.ts';

/** Free-form metadata, returned unchanged. */
export type Metadata = Record<string, unknown>;

/** A payment session (docs/payments-api.md, "Resources > Payment"). */
export interface PaymentRecord {
  reference: string;
  transactionId: string;
  status: PaymentStatus;
  amountMinor: number;
  /** Processing fee in minor units (see fees.ts). */
  feeMinor: number;
  currency: string;
  customerEmail: string;
  paymentMethod: PaymentMethod | null;
  metadata: Metadata;
  callbackUrl: string | undefined;
  webhookUrl: string | undefined;
  merchantBearsFees: boolean;
  createdAt: number;
  updatedAt: number;
  /** End of the checkout window (sandbox ms). */
  expiresAt: number;
}

/** A transfer; also what `POST /direct-debits/disburse` creates (docs/payments-api.md, "Resources > Transfer"). */
export interface TransferRecord {
  reference: string;
  customerName: string | null;
  customerEmail: string | null;
  amountMinor: number;
  feeMinor: number;
  currency: string;
  bankCode: string;
  bankAccount: string;
  bankName: string | null;
  narration: string | null;
  metadata: Metadata;
  webhookUrl: string | undefined;
  status: TransferStatus;
  createdAt: number;
  updatedAt: number;
  /** When the transfer reached a terminal state, or null while processing. */
  completedAt: number | null;
}

/** A refund (docs/payments-api.md, "Resources > Refund"). */
export interface RefundRecord {
  refundReference: string;
  paymentReference: string;
  currency: string;
  amountMinor: number;
  reason: string | null;
  accountNumber: string | null;
  bankCode: string | null;
  status: RefundStatus;
  createdAt: number;
  updatedAt: number;
}

/** Mandate statuses (docs/payments-api.md, "Resources > Mandate"). */
type MandateStatus = 'pending' | 'active' | 'cancelled';

/** A direct debit mandate (docs/payments-api.md, "Resources > Mandate"). */
export interface MandateRecord {
  mandateReference: string;
  status: MandateStatus;
  customerName: string;
  customerEmail: string;
  accountNumber: string;
  bankCode: string;
  /** `YYYY-MM-DD`. */
  startDate: string;
  /** `YYYY-MM-DD`. */
  endDate: string;
  monthlyAmountMinor: number;
  monthlyDebitCount: number;
  activationInitiated: boolean;
  createdAt: number;
  updatedAt: number;
}

/** Debit statuses; `failed` names the spec's unnamed failure state. */
type DebitStatus = 'processing' | 'success' | 'failed';

/** A direct debit transaction (docs/payments-api.md, "Resources > Direct debit transaction"). */
export interface DebitRecord {
  paymentReference: string;
  mandateReference: string;
  amountMinor: number;
  narration: string;
  status: DebitStatus;
  createdAt: number;
  updatedAt: number;
}

/** A virtual account (docs/payments-api.md, "Resources > Virtual account"). */
export interface VirtualAccountRecord {
  accountReference: string;
  reservationReference: string;
  accountNumber: string;
  bankName: string;
  bankCode: string;
  accountStatus: 'active';
  customerName: string;
  customerEmail: string;
  currencyCode: string;
  metadata: Metadata;
  createdAt: number;
}

/** An inbound transfer to a virtual account (docs/payments-api.md, "Resources > Virtual account transaction"). */
export interface VirtualAccountTransactionRecord {
  transactionId: string;
  accountReference: string;
  accountNumber: string;
  amountMinor: number;
  currency: string;
  status: 'success';
  senderName: string;
  senderBank: string;
  narration: string;
  metadata: Metadata;
  createdAt: number;
  updatedAt: number;
}

/** Fault injection settings, set by `POST /__sandbox/faults`. */
export interface FaultConfig {
  /** Delay before answering, in milliseconds. */
  latencyMs: number;
  /** Probability in [0, 1] of answering 503 before processing. */
  errorRate: number;
  /** Probability in [0, 1] of processing and then dropping the connection. */
  dropRate: number;
  /** Response variant of the endpoints the spec shows in two shapes. */
  variant: 'enveloped' | 'flat';
}

/** Kinds of scheduled work, run in due order by settlement.ts. */
export type JobKind =
  | 'payment.expire'
  | 'transfer.settle'
  | 'transfer.reverse'
  | 'refund.settle'
  | 'debit.settle';

/** A scheduled piece of work on one record. */
export interface Job {
  /** Sandbox time (ms) at which it runs. */
  dueAt: number;
  /** Tie-breaker: scheduling order. */
  seq: number;
  kind: JobKind;
  /** The record's reference. */
  key: string;
}

/** Everything `POST /__sandbox/reset` empties. */
export interface SandboxState {
  balanceMinor: number;
  clockOffsetMs: number;
  /** Counter behind generated ids and job order. */
  seq: number;
  payments: Map<string, PaymentRecord>;
  transfers: Map<string, TransferRecord>;
  refunds: Map<string, RefundRecord>;
  mandates: Map<string, MandateRecord>;
  debits: Map<string, DebitRecord>;
  virtualAccounts: Map<string, VirtualAccountRecord>;
  virtualAccountTransactions: VirtualAccountTransactionRecord[];
  /** Virtual account numbers in use. */
  accountNumbers: Set<string>;
  /** Pending work, sorted by dueAt then seq. */
  jobs: Job[];
  webhooks: WebhookRecord[];
  /** The request log, oldest first, at most 500 entries (request-log.ts). */
  requests: RequestLogEntry[];
  faults: FaultConfig;
  /** Timing fault rules, in the order added (fault-rules.ts). */
  faultRules: FaultRule[];
  /** Record faults attached and not yet used up, by record key (record-faults.ts). */
  recordFaults: Map<string, AttachedFaults>;
  /** Records `visible_after` hides from reads, by record key: how many windows are open. */
  hidden: Map<string, number>;
  /** What reads show of a record whose webhook went early, by record key. */
  staleViews: Map<string, object>;
  /** Real ms before each retry of a failed webhook delivery (webhooks.ts). */
  webhookRetryDelaysMs: number[];
}

/** No faults, enveloped responses. */
function noFaults(): FaultConfig {
  return { latencyMs: 0, errorRate: 0, dropRate: 0, variant: 'enveloped' };
}

/**
 * Fresh, empty state.
 *
 * @param openingBalanceMinor - merchant balance in minor units.
 */
export function createState(openingBalanceMinor: number): SandboxState {
  return {
    balanceMinor: openingBalanceMinor,
    clockOffsetMs: 0,
    seq: 0,
    payments: new Map(),
    transfers: new Map(),
    refunds: new Map(),
    mandates: new Map(),
    debits: new Map(),
    virtualAccounts: new Map(),
    virtualAccountTransactions: [],
    accountNumbers: new Set(),
    jobs: [],
    webhooks: [],
    requests: [],
    faults: noFaults(),
    faultRules: [],
    recordFaults: new Map(),
    hidden: new Map(),
    staleViews: new Map(),
    webhookRetryDelaysMs: [...DEFAULT_WEBHOOK_RETRY_DELAYS_MS],
  };
}
