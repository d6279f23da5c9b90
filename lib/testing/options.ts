import { parseMinorUnits } from '../money.ts';

/**
 * Options of `createSandbox`. Every option has a local default that matches `npm start`
 * (docs/sandbox.md, "Local defaults").
 */
export interface SandboxOptions {
  /** The merchant key identifier requests must carry in `X-Key-Id`. @default 'sandbox-key' */
  keyId?: string;
  /** The merchant API secret: verifies requests and signs webhooks. @default 'sandbox-secret' */
  secret?: string;
  /**
   * Opening merchant balance in major units, as a decimal string or number with at most
   * 2 fraction digits (restored by `POST /__sandbox/reset`). @default '1000000.00'
   */
  openingBalance?: string | number;
  /** Currency of the merchant account; the only currency money endpoints accept. @default 'NGN' */
  currency?: string;
  /** Default webhook target, used when a request gives no `webhook_url`. @default none (events are logged as `no_target`) */
  webhookUrl?: string;
  /**
   * Origin used to build `authorization_url` (e.g. `http://127.0.0.1:8788`).
   * @default the origin of the incoming request
   */
  publicBaseUrl?: string;
  /**
   * Real clock in milliseconds since the epoch: signature freshness is checked against
   * it, and the sandbox clock is this plus the offset moved by `/__sandbox/clock/advance`.
   * @default Date.now
   */
  now?: () => number;
  /** fetch used to send webhooks. @default globalThis.fetch (looked up at send time) */
  fetch?: typeof fetch;
  /** Random source in [0, 1) for fault rates and generated ids. @default Math.random */
  random?: () => number;
  /** Seconds (sandbox time) after which processing transfers, refunds and debits settle. @default 5 */
  settleAfterSec?: number;
}

/** {@link SandboxOptions} with every default applied; balance in minor units. */
export interface ResolvedSandboxOptions {
  keyId: string;
  secret: string;
  openingBalanceMinor: number;
  currency: string;
  webhookUrl: string | undefined;
  publicBaseUrl: string | undefined;
  now: () => number;
  fetch: typeof fetch;
  random: () => number;
  /** Settlement delay in milliseconds of sandbox time. */
  settleAfterMs: number;
}

/**
 * Applies the defaults of {@link SandboxOptions}.
 *
 * @throws {RangeError} when `openingBalance` is not an exact amount or `settleAfterSec` is negative.
 */
export function resolveOptions(options: SandboxOptions): ResolvedSandboxOptions {
  const openingBalanceMinor = parseMinorUnits(options.openingBalance ?? '1000000.00');
  if (openingBalanceMinor === undefined) {
    throw new RangeError('openingBalance must be an amount with at most 2 decimal places');
  }
  const settleAfterSec = options.settleAfterSec ?? 5;
  if (!(settleAfterSec >= 0)) throw new RangeError('settleAfterSec must be >= 0');
  const customFetch = options.fetch;
  return {
    keyId: options.keyId ?? 'sandbox-key',
    secret: options.secret ?? 'sandbox-secret',
    openingBalanceMinor,
    currency: options.currency ?? 'NGN',
    webhookUrl: options.webhookUrl,
    publicBaseUrl: options.publicBaseUrl?.replace(/\/+$/, ''),
    now: options.now ?? Date.now,
    fetch: customFetch ?? ((input, init) => globalThis.fetch(input, init)),
    random: options.random ?? Math.random,
    settleAfterMs: Math.round(settleAfterSec * 1000),
  };
}
