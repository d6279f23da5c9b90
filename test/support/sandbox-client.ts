/**
 * Black-box helpers for contract tests of the sandbox emulator (docs/sandbox.md): start a
 * sandbox over real HTTP on a free loopback port, send signed requests with real
 * `fetch` and drive the `/__sandbox/*` controls (webhooks arrive at
 * `webhook-receiver.ts`). Nothing here reaches into the emulator's internals except `tick()`.
 */

import { type SandboxServer, startSandboxServer } from '../../cli/sandbox-server.ts';
import { signRequest } from '../../lib/signing.ts';

/** Sandbox merchant key id (the local default, docs/sandbox.md). */
export const SANDBOX_KEY_ID = 'sandbox-key';
/** Sandbox merchant HMAC secret, which also signs its webhooks (the local default). */
export const SANDBOX_SECRET = 'sandbox-secret';
/** Opening balance of a fresh sandbox, NGN major units (the local default). */
export const OPENING_BALANCE = 1_000_000;
/** Sandbox seconds after which processing items settle (5 by default), plus a margin. */
const SETTLE_SECONDS = 6;

/**
 * A parsed JSON body. Contract tests read arbitrary nested fields and assert on their
 * values, so the body is deliberately untyped.
 */
// biome-ignore lint/suspicious/noExplicitAny: tests assert on values of untyped JSON.
export type Json = any;

/** One HTTP exchange as the caller saw it. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  body: Json;
  /** The raw body text. */
  text: string;
}

/** How {@link SandboxClient.call} signs a request. */
interface SignOptions {
  /** Key id sent as `X-Key-Id`. @default 'sandbox-key' */
  keyId?: string;
  /** HMAC secret. @default 'sandbox-secret' */
  secret?: string;
  /** Unix seconds to sign with. @default now (real clock) */
  timestamp?: number;
}

/** Options of {@link SandboxClient.call}. */
export interface CallOptions {
  /** Extra headers, applied last (they can override the signature headers). */
  headers?: Record<string, string>;
  /** `false` sends no signature headers; an object tweaks the signature. @default true */
  sign?: boolean | SignOptions;
  /** Send these exact bytes instead of `JSON.stringify(body)`. */
  rawBody?: string;
  /** `Content-Type` of a request with a body. @default 'application/json' */
  contentType?: string;
  /** Sign these bytes while sending the body (to test tampering). */
  signedBody?: string;
  /** Passed to fetch (`'manual'` to see a 303). @default 'follow' */
  redirect?: RequestRedirect;
}

/** `GET /__sandbox/state`. */
interface SandboxState {
  now: string;
  balance: number;
  currency: string;
  counts: Record<string, number>;
}

/** A record of `GET /__sandbox/webhooks`. */
interface WebhookRecord {
  event_id: string;
  event_type: string;
  url: string;
  body: Json;
  delivery: 'pending' | 'delivered' | 'failed' | 'no_target';
  response_status?: number;
  error?: string;
}

/** A client bound to one running sandbox server. */
export interface SandboxClient {
  /** Base URL of the server, e.g. `http://127.0.0.1:53124`. */
  url: string;
  server: SandboxServer;
  /**
   * Sends a (by default signed) request. The JSON body is stringified once and signed
   * over those exact bytes; a body-less request signs `${timestamp}:`.
   */
  call(method: string, path: string, body?: unknown, options?: CallOptions): Promise<ApiResponse>;
  /** Sends an unsigned request to `/__sandbox/<path>`: POST with a JSON body when given, else GET. */
  control(path: string, body?: unknown): Promise<ApiResponse>;
  /** Reads `GET /__sandbox/state`; throws unless it answers 200. */
  state(): Promise<SandboxState>;
  /** The merchant balance in minor units (kobo), read from the state. */
  balanceMinor(): Promise<number>;
  /** Moves the sandbox clock forward; throws unless the control answers 2xx. */
  advance(seconds: number): Promise<void>;
  /** Advances past the settlement delay and runs a tick (settles and flushes webhooks). */
  settle(): Promise<void>;
  /** Runs one sandbox tick now, without moving the clock: settles what is due, flushes webhooks. */
  tick(): Promise<void>;
  /** Empties all state; throws unless the control answers 2xx. */
  reset(): Promise<void>;
  /** Reads `GET /__sandbox/webhooks`. */
  webhooks(): Promise<WebhookRecord[]>;
  /** Completes a checkout through the control; throws unless it answers 2xx. */
  complete(
    reference: string,
    outcome: 'success' | 'failed' | 'abandoned',
    paymentMethod?: string,
  ): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** Parses a response into an {@link ApiResponse}. */
async function readResponse(response: Response): Promise<ApiResponse> {
  const text = await response.text();
  let body: Json;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

function expectOk(what: string, res: ApiResponse): void {
  if (res.status < 200 || res.status >= 300) {
    throw new Error(`${what} answered ${res.status}: ${res.text}`);
  }
}

/**
 * Starts a sandbox server on a free loopback port (`startSandboxServer({ port: 0 })`)
 * and returns a client for it. Call `close()` in `afterAll`.
 *
 * @param options - sandbox options, e.g. `{ webhookUrl }`.
 */
export async function startSandboxClient(
  options: Parameters<typeof startSandboxServer>[0] = {},
): Promise<SandboxClient> {
  const server = await startSandboxServer({ port: 0, ...options });
  const { url } = server;

  const call: SandboxClient['call'] = async (method, path, body, opts = {}) => {
    const raw = opts.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const headers: Record<string, string> = {};
    if (raw !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
    const sign = opts.sign ?? true;
    if (sign !== false) {
      const tweak = sign === true ? {} : sign;
      Object.assign(
        headers,
        await signRequest({
          keyId: tweak.keyId ?? SANDBOX_KEY_ID,
          secret: tweak.secret ?? SANDBOX_SECRET,
          body: opts.signedBody ?? raw ?? '',
          ...(tweak.timestamp === undefined ? {} : { timestamp: tweak.timestamp }),
        }),
      );
    }
    Object.assign(headers, opts.headers);
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      redirect: opts.redirect ?? 'follow',
      ...(raw === undefined ? {} : { body: raw }),
    });
    return readResponse(response);
  };

  const control: SandboxClient['control'] = async (path, body) => {
    const response = await fetch(`${url}/__sandbox/${path.replace(/^\//, '')}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return readResponse(response);
  };

  const state: SandboxClient['state'] = async () => {
    const res = await control('state');
    expectOk('GET /__sandbox/state', res);
    return res.body as SandboxState;
  };

  const advance: SandboxClient['advance'] = async (seconds) => {
    const res = await control('clock/advance', { seconds });
    expectOk('POST /__sandbox/clock/advance', res);
  };

  return {
    url,
    server,
    call,
    control,
    state,
    balanceMinor: async () => toMinor((await state()).balance),
    advance,
    settle: async () => {
      await advance(SETTLE_SECONDS);
      await server.sandbox.tick();
    },
    tick: () => server.sandbox.tick(),
    reset: async () => {
      const res = await control('reset', {});
      expectOk('POST /__sandbox/reset', res);
    },
    webhooks: async () => {
      const res = await control('webhooks');
      expectOk('GET /__sandbox/webhooks', res);
      return res.body.data as WebhookRecord[];
    },
    complete: async (reference, outcome, paymentMethod) => {
      const res = await control(
        `payments/${encodeURIComponent(reference)}/complete`,
        paymentMethod === undefined ? { outcome } : { outcome, payment_method: paymentMethod },
      );
      expectOk(`complete ${reference}`, res);
      return res;
    },
    close: () => server.close(),
  };
}

/**
 * Converts a major-unit amount (number or decimal string) to integer minor units, so
 * tests compare money exactly and never sum binary floats.
 */
export function toMinor(amount: number | string): number {
  const text = typeof amount === 'number' ? amount.toFixed(2) : amount;
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) throw new Error(`not a 2-decimal amount: ${String(amount)}`);
  const minor = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] === '-' ? -minor : minor;
}

export { uniqueRef } from './payloads.ts';

/** `YYYY-MM-DD` of an ISO timestamp plus `days` (UTC). */
export function isoDate(iso: string, days = 0): string {
  const date = new Date(iso);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}
