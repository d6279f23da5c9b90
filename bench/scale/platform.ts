/**
 * Cloudflare's published limits and prices the load model uses (bench/scale/model.ts), each
 * with the page it was read from. Read on 2026-11-27; pages change: check them again before
 * relying on a figure, and change it here only (bench/README.md cites the same pages).
 * Prices are those of the Workers Paid plan above its included usage, in US dollars.
 */

/** The date the pages below were read. */
export const READ_ON = '2026-11-27';

/** One published figure and where it stands. */
interface Published {
  readonly value: number;
  /** What the figure is, in the page's terms. */
  readonly what: string;
  readonly url: string;
}

const D1_LIMITS = 'https://developers.cloudflare.com/d1/platform/limits/';
const D1_PRICING = 'https://developers.cloudflare.com/d1/platform/pricing/';
const QUEUES_LIMITS = 'https://developers.cloudflare.com/queues/platform/limits/';
const QUEUES_PRICING = 'https://developers.cloudflare.com/queues/platform/pricing/';
const DO_LIMITS = 'https://developers.cloudflare.com/durable-objects/platform/limits/';
const DO_PRICING = 'https://developers.cloudflare.com/durable-objects/platform/pricing/';
const WORKERS_LIMITS = 'https://developers.cloudflare.com/workers/platform/limits/';
const WORKERS_PRICING = 'https://developers.cloudflare.com/workers/platform/pricing/';

/** The limits. */
export const LIMITS = {
  d1DatabaseBytes: {
    value: 10e9,
    what: 'Maximum database size: 10 GB (Workers Paid); "cannot be further increased"',
    url: D1_LIMITS,
  },
  d1QueriesPerSecond: {
    value: 1000,
    what: '"Each individual D1 database is inherently single-threaded": ~1,000 queries/s at 1 ms each',
    url: D1_LIMITS,
  },
  d1QueriesPerInvocation: {
    value: 1000,
    what: 'Queries per Worker invocation: 1000 (Workers Paid)',
    url: D1_LIMITS,
  },
  queueMessagesPerSecond: {
    value: 5000,
    what: 'Per-queue message throughput: 5,000 messages per second',
    url: QUEUES_LIMITS,
  },
  queueConcurrentConsumers: {
    value: 250,
    what: 'Concurrent consumer invocations: 250 (push-based)',
    url: QUEUES_LIMITS,
  },
  objectStorageBytes: {
    value: 10e9,
    what: 'Storage per Durable Object (SQLite-backed): 10 GB',
    url: DO_LIMITS,
  },
  objectRequestsPerSecond: {
    value: 1000,
    what: 'An individual Durable Object has a soft limit of 1,000 requests per second',
    url: DO_LIMITS,
  },
  subrequestsPerInvocation: {
    value: 10_000,
    what: 'Subrequests: 10,000 per request (Workers Paid)',
    url: WORKERS_LIMITS,
  },
} as const satisfies Record<string, Published>;

/** The prices, per unit named in `what`. */
export const PRICES = {
  workersRequest: {
    value: 0.3 / 1e6,
    what: 'Workers requests: $0.30 per million',
    url: WORKERS_PRICING,
  },
  workersCpuMs: {
    value: 0.02 / 1e6,
    what: 'Workers CPU time: $0.02 per million CPU milliseconds',
    url: WORKERS_PRICING,
  },
  d1RowRead: { value: 0.001 / 1e6, what: 'D1 rows read: $0.001 per million', url: D1_PRICING },
  d1RowWritten: { value: 1 / 1e6, what: 'D1 rows written: $1.00 per million', url: D1_PRICING },
  d1GbMonth: { value: 0.75, what: 'D1 storage: $0.75 per GB-month', url: D1_PRICING },
  queueOperation: {
    value: 0.4 / 1e6,
    what: 'Queues: $0.40 per million operations (per 64 KB written, read or deleted; 3 per message)',
    url: QUEUES_PRICING,
  },
  objectRequest: {
    value: 0.15 / 1e6,
    what: 'Durable Objects requests: $0.15 per million (each RPC method call, each alarm)',
    url: DO_PRICING,
  },
  objectGbSecond: {
    value: 12.5 / 1e6,
    what: 'Durable Objects duration: $12.50 per million GB-s, billed at 128 MB while active',
    url: DO_PRICING,
  },
  objectRowRead: {
    value: 0.001 / 1e6,
    what: 'SQLite-backed Durable Object rows read: $0.001 per million',
    url: DO_PRICING,
  },
  objectGbMonth: {
    value: 0.2,
    what: 'SQLite-backed Durable Object storage: $0.20 per GB-month',
    url: DO_PRICING,
  },
  objectRowWritten: {
    value: 1 / 1e6,
    what: 'SQLite-backed Durable Object rows written: $1.00 per million (setAlarm: one row)',
    url: DO_PRICING,
  },
} as const satisfies Record<string, Published>;

/** Memory a Durable Object is billed for while active, in GB (the pricing page: 128 MB). */
export const OBJECT_BILLED_GB = 0.128;

/** Operations per queue message delivered once: write, read, delete (the pricing page). */
export const QUEUE_OPERATIONS_PER_MESSAGE = 3;
