// The sandbox's in-memory records. Amounts are integer minor units, times epoch
// milliseconds of sandbox time; serializers turn them into the spec's JSON shapes.
import type { PaymentMethod, PaymentStatus } from '../schemas/payments.ts';
import type { RefundStatus } from '../schemas/refunds.ts';
import type { TransferStatus } from '../schemas/transfers.ts';
import type { FaultRule } from './fault-rules.ts';
import type { AttachedFaults } from './record-faults.ts';

/** Free-form metadata, returned unchanged. */
export type Metadata = Record<string, unknown>;

/** A payment session (spec: Resources > Payment). */
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

/** A transfer; also what `POST /direct-debits/disburse` creates (spec: Resources > Transfer). */
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

/** A refund (spec: Resources > Refund). */
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

/** Mandate statuses (spec: Resources > Mandate). */
export type MandateStatus = 'pending' | 'active' | 'cancelled';

/** A direct debit mandate (spec: Resources > Mandate). */
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
export type DebitStatus = 'processing' | 'success' | 'failed';

/** A direct debit transaction (spec: Resources > Direct debit transaction). */
export interface DebitRecord {
  paymentReference: string;
  mandateReference: string;
  amountMinor: number;
  narration: string;
  status: DebitStatus;
  createdAt: number;
  updatedAt: number;
}

/** A virtual account (spec: Resources > Virtual account). */
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

/** An inbound transfer to a virtual account (spec: Resources > Virtual account transaction). */
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

/** Delivery state of a logged webhook. */
export type WebhookDelivery = 'pending' | 'delivered' | 'failed' | 'no_target';

/** The spec's webhook envelope (spec: Events). */
export interface WebhookEnvelope {
  event_type: string;
  status: string;
  message: string;
  event_id: string;
  /** ISO 8601, sandbox time of the event. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** One webhook in the log served at `GET /__sandbox/webhooks`. */
export interface WebhookRecord {
  event_id: string;
  event_type: string;
  url: string | null;
  body: WebhookEnvelope;
  /** `pending` also while a retry is scheduled; `failed` once the schedule is spent. */
  delivery: WebhookDelivery;
  /** Delivery attempts made so far. */
  attempts: number;
  /** When the next retry is due (real time, ISO 8601), while one is scheduled. */
  next_attempt_at?: string;
  /** Status of the last attempt, when it got an answer. */
  response_status?: number;
  /** Error of the last attempt, when it got none. */
  error?: string;
}

/** How a timing fault rule acted on a logged request (request-faults.ts). */
export interface RequestFaultView {
  /** The rule's id. */
  rule: string;
  fault: string;
  /**
   * For `error_then_commit` and `drop_then_commit`: the status the deferred processing
   * ended with (null until it ran) and when it ran (sandbox time, ISO 8601).
   */
  commit_status?: number | null;
  committed_at?: string | null;
}

/** One request that reached an API endpoint, as served by `GET /__sandbox/requests`. */
export interface RequestLogEntry {
  method: string;
  /** The URL path as received (still percent-encoded). */
  path: string;
  /** The query string as received, without its `?` (`''` when there is none). */
  query: string;
  /** Header names lowercased; credentials (`authorization`, `proxy-authorization`, `cookie`) read `<redacted>`. */
  headers: Record<string, string>;
  /** The first 2 KiB of the body as UTF-8 text. */
  body: string;
  /** The request id the sandbox answered with (the incoming `X-Request-Id` or a generated one). */
  request_id: string;
  /** Sandbox time of arrival, ISO 8601. */
  received_at: string;
  /** The status answered; `null` when fault injection dropped the connection. */
  status: number | null;
  /** Present when a timing fault rule acted on the request. */
  fault?: RequestFaultView;
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

/**
 * Real milliseconds before each retry of a webhook its receiver did not take (2xx), after
 * each failed attempt: 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, so 8 attempts in all
 * over about 1 h 43 min, a provider's schedule compressed so a test or a restarted
 * gateway sees it.
 */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000,
];

/** No faults, enveloped responses. */
export function noFaults(): FaultConfig {
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
