import type { Endpoint } from './endpoints.ts';
import { ClientCore, type EndpointInput, type RequestOptions } from './internal/core.ts';
import type { Logger, RequestEvent, ResponseEvent } from './internal/hooks.ts';
import { requireSecret } from './internal/secret.ts';
import { Transport } from './internal/transport.ts';
import { Banks } from './resources/banks.ts';
import { DirectDebits } from './resources/direct-debits.ts';
import { Payments } from './resources/payments.ts';
import { Refunds } from './resources/refunds.ts';
import { Transfers } from './resources/transfers.ts';
import { VirtualAccounts } from './resources/virtual-accounts.ts';

/**
 * Named environments: `local` is the sandbox emulator that `npm start` and
 * `edgepay sandbox` serve on this machine, `http://127.0.0.1:8788`. The payments API
 * publishes no addresses, so there is no named remote one: for the provider's sandbox or
 * live service, or the emulator on another port, pass `baseUrl` (docs/assumptions.md).
 */
export const ENVIRONMENTS = {
  /** The emulator on this machine that `npm start` and `edgepay sandbox` serve. */
  local: 'http://127.0.0.1:8788',
} as const;

/** Options of {@link PaymentsClient}: direct (keyId + secret) or through the gateway (bearerToken). */
export interface PaymentsClientOptions {
  /** Merchant key identifier, sent as `X-Key-Id` (direct mode). */
  keyId?: string;
  /**
   * API secret; signs every attempt and never leaves the process (direct mode). Required
   * with `keyId`: missing (`undefined`, `null`) or empty is a `TypeError`.
   */
  secret?: string;
  /** Gateway mode: the caller token of an edgepay gateway; nothing is signed here. */
  bearerToken?: string;
  /** Base address of the service or the gateway, e.g. `https://gateway.example.com`. */
  baseUrl?: string;
  /**
   * A named address instead of `baseUrl` (which wins when both are given): `'local'` is
   * `http://127.0.0.1:8788`, the emulator `npm start` and `edgepay sandbox` serve. Any
   * other name is a `TypeError`, `'sandbox'` included: it read as the provider's sandbox
   * while it meant this machine.
   */
  environment?: keyof typeof ENVIRONMENTS;
  /** Timeout of each attempt in milliseconds, body read included. @default 60000 */
  timeoutMs?: number;
  /** Retries after the first attempt (connection errors, timeouts, 408, 429, 5xx). @default 2 */
  maxRetries?: number;
  /** Budget of one call in milliseconds, all attempts, waits and lookups included. @default none */
  deadlineMs?: number;
  /**
   * Direct mode, money requests with a merchant reference (payments, transfers, refunds,
   * debits): after an ambiguous failure (timeout, connection error, 5xx) the reference is
   * looked up, with backoff, for this many milliseconds from the failure before the
   * request may be sent again; it is resent only when its record is still absent at the
   * end, and a resend refused because the reference exists is looked up again. A
   * provider can commit seconds after its load balancer answered 5xx or a short client
   * timeout fired. Needs `maxRetries` >= 1; `deadlineMs` cuts it short (no resend then).
   * Through the gateway, its idempotency key and its own settle window do this instead.
   * @default the larger of 5000 and the attempt's timeout (`timeoutMs`)
   */
  settleMs?: number;
  /** `fetch` implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** SubtleCrypto implementation for signing. @default globalThis.crypto.subtle */
  subtle?: typeof crypto.subtle;
  /** Clock in milliseconds since the epoch (timestamps and elapsed times). @default Date.now */
  now?: () => number;
  /** Random source in [0, 1) for retry jitter. @default Math.random */
  random?: () => number;
  /**
   * Called before every attempt with method, URL (emails and account numbers masked),
   * attempt number and request id.
   */
  onRequest?: (event: RequestEvent) => void;
  /** Called after every attempt with status (or error), attempt, elapsed ms and request id. */
  onResponse?: (event: ResponseEvent) => void;
  /**
   * Debug log sink. @default none (silent); it never receives secrets, signatures, email
   * addresses or full account numbers (masked in the URL and in an error's message).
   */
  logger?: Logger;
}

/**
 * The client of the payments API, with one resource per endpoint group (docs/payments-api.md,
 * "Endpoints").
 * Works unchanged on Node >= 22, Deno, Bun, Cloudflare Workers and browsers.
 *
 * @throws {TypeError} on missing credentials (a `keyId` without a non-empty `secret`
 *   names `secret`), a missing base address or an unknown `environment`, or without a
 *   global `fetch`.
 *
 * @example
 * ```ts
 * // The local emulator (`npm start`); pass `baseUrl` for any other address.
 * const client = new PaymentsClient({ keyId: 'sandbox-key', secret: 'sandbox-secret', environment: 'local' });
 * const transfer = await client.transfers.initialize({ reference: 'payout-1', amount: 5000, currency: 'NGN', ... });
 * const settled = await client.transfers.waitForFinal(transfer.reference);
 * ```
 */
export class PaymentsClient {
  /** Hosted checkout payments (docs/payments-api.md, "Endpoints > Payments"). */
  readonly payments: Payments;
  /** Bank transfers (docs/payments-api.md, "Endpoints > Transfers"). */
  readonly transfers: Transfers;
  /** Refunds (docs/payments-api.md, "Endpoints > Refunds"). */
  readonly refunds: Refunds;
  /** Bank list and account resolution (docs/payments-api.md, "Endpoints > Banks"). */
  readonly banks: Banks;
  /** Mandates, debits and disbursement of collected funds (docs/payments-api.md, "Endpoints > Direct debit"). */
  readonly directDebits: DirectDebits;
  /** Virtual accounts and their inbound transfers (docs/payments-api.md, "Endpoints > Virtual accounts"). */
  readonly virtualAccounts: VirtualAccounts;
  readonly #core: ClientCore;

  /** @param options - credentials, address, timeouts and hooks; see {@link PaymentsClientOptions}. */
  constructor(options: PaymentsClientOptions) {
    const core = new ClientCore(new Transport(resolveSettings(options)));
    this.#core = core;
    this.payments = new Payments(core);
    this.transfers = new Transfers(core);
    this.refunds = new Refunds(core);
    this.banks = new Banks(core);
    this.directDebits = new DirectDebits(core);
    this.virtualAccounts = new VirtualAccounts(core);
  }

  /**
   * Calls any endpoint of {@link ENDPOINTS} by its table entry; the resources' methods are
   * typed shortcuts over it. Validation, signing, retries (as the endpoint's effect
   * allows) and normalization are the same.
   *
   * @param endpoint - an entry of `ENDPOINTS`, e.g. `ENDPOINTS['transfers.verify']`.
   * @param input - `params` (path parameter values in order), `body`, `query`.
   * @param options - signal, timeoutMs, idempotencyKey, requestId.
   * @returns the normalized record (lists: use the resource's method for paging).
   * @throws {RequestValidationError}, {@link ResponseValidationError}, APIError subclasses,
   *   ConnectionError, TimeoutError, AbortError.
   *
   * @example
   * ```ts
   * const transfer = await client.request(ENDPOINTS['transfers.verify'], { params: ['payout-42'] });
   * ```
   */
  request<Out>(
    endpoint: Endpoint<Out>,
    input: EndpointInput = {},
    options?: RequestOptions,
  ): Promise<Out> {
    return this.#core.request(endpoint, input, options);
  }
}

function resolveSettings(options: PaymentsClientOptions) {
  const { baseUrl, environment } = options;
  if (environment !== undefined && !Object.hasOwn(ENVIRONMENTS, environment)) {
    throw new TypeError(
      `Unknown environment '${environment}': use 'local' (${ENVIRONMENTS.local}) or baseUrl`,
    );
  }
  const base = baseUrl ?? (environment && ENVIRONMENTS[environment]);
  if (!base) throw new TypeError("PaymentsClient needs baseUrl (or environment: 'local')");
  const fetchImpl = options.fetch ?? (typeof fetch === 'function' ? fetch : undefined);
  if (fetchImpl === undefined) throw new TypeError('No global fetch in this runtime: pass `fetch`');
  let credentials: ConstructorParameters<typeof Transport>[0]['credentials'];
  if (options.bearerToken !== undefined) {
    credentials = { kind: 'bearer', token: options.bearerToken };
  } else if (options.keyId !== undefined) {
    // Fails closed, like verification: an unset variable must not sign with an empty key.
    credentials = {
      kind: 'signature',
      keyId: options.keyId,
      secret: requireSecret(options.secret),
    };
  } else {
    throw new TypeError('PaymentsClient needs keyId and secret (direct) or bearerToken (gateway)');
  }
  return {
    baseUrl: base,
    // Said when a connection fails, so a wrong address is found from the message alone.
    baseUrlFrom: baseUrl === undefined ? `environment '${environment}'` : 'baseUrl',
    credentials,
    // Bound: some runtimes reject fetch called with another `this`.
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetchImpl(input, init),
    subtle: options.subtle,
    now: options.now ?? Date.now,
    random: options.random ?? Math.random,
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
    deadlineMs: options.deadlineMs,
    settleMs: options.settleMs,
    onRequest: options.onRequest,
    onResponse: options.onResponse,
    logger: options.logger,
  };
}
