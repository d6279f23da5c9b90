import { DuplicateReferenceError } from '../api-errors.ts';
import {
  AbortError,
  ConnectionError,
  OutcomeUnknownError,
  PaymentsError,
  RedactedError,
  TimeoutError,
} from '../errors.ts';
import { sendAttempt } from './attempt.ts';
import { delay } from './delay.ts';
import type { Logger, RequestEvent, ResponseEvent } from './hooks.ts';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.ts';
import { backoffDelayMs, isRetryableStatus, retryAfterMs } from './retry-timing.ts';
import { lookUpUntilSettled, type ReferenceLookup, type SettleTiming } from './settle.ts';

/** How the transport authenticates: HMAC signing with the secret, or a gateway bearer token. */
type Credentials =
  | { kind: 'signature'; keyId: string; secret: string }
  | { kind: 'bearer'; token: string };

/** Settings of a {@link Transport}, resolved by the client. */
export interface TransportSettings {
  baseUrl: string;
  /** Where `baseUrl` came from (the option, or a named environment), said when a connection fails. */
  baseUrlFrom: string;
  credentials: Credentials;
  fetch: typeof fetch;
  subtle: typeof crypto.subtle | undefined;
  now: () => number;
  random: () => number;
  /** Per-attempt timeout in milliseconds, body read included. */
  timeoutMs: number;
  maxRetries: number;
  /** Overall budget of one logical call in milliseconds, retries and waits included. */
  deadlineMs: number | undefined;
  /**
   * Direct mode: how long after an ambiguous failure of a money request its reference is
   * looked up before a resend, in milliseconds. `undefined`: the larger of
   * {@link DEFAULT_SETTLE_MS} and the attempt's timeout.
   */
  settleMs: number | undefined;
  onRequest: ((event: RequestEvent) => void) | undefined;
  onResponse: ((event: ResponseEvent) => void) | undefined;
  logger: Logger | undefined;
}

/** When a request may be sent again after a failure. */
export type RetryPolicy =
  /** Reads: always safe to resend. */
  | { kind: 'safe' }
  /**
   * Writes that can be looked up: after an ambiguous failure, look first; a found record
   * is the response ("verify before resend").
   */
  | {
      kind: 'verify';
      lookup: ReferenceLookup;
      /**
       * The merchant reference of a money request. With it, in direct mode, the lookups
       * go on through the settle window before a resend, and a resend refused because the
       * reference exists is looked up again. Without it (a mandate's cancellation), one
       * lookup, then the resend.
       */
      reference?: string | undefined;
    }
  /** Writes with nothing to look up: resent only after 408 or 429 (not processed). */
  | { kind: 'never' };

/** One logical call. */
export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH';
  /** Path from the base, starting with `/`, every dynamic segment already encoded (see `path`). */
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  /** Sent without signature headers (`banks.list`, the one `unsigned` row of docs/endpoints.md). */
  unsigned?: boolean | undefined;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Budget of this call in milliseconds, overriding the client's `deadlineMs`. */
  deadlineMs?: number | undefined;
  /** Gateway mode: the `Idempotency-Key`, reused by every attempt of this call. */
  idempotencyKey?: string | undefined;
  /** The `X-Request-Id` of every attempt. @default a new id per call */
  requestId?: string | undefined;
}

/** A successful answer. */
export interface CallResponse {
  kind: 'response';
  method: string;
  url: string;
  status: number;
  headers: Headers;
  rawBody: string;
  /** Parsed JSON; the text itself when it is not JSON; `undefined` when empty. */
  body: unknown;
  requestId: string;
}

/** The response of a call: a successful response, or the record found by verify-before-resend. */
export type CallResult = CallResponse | { kind: 'recovered'; value: unknown };

/**
 * The shortest settle window of a money request in direct mode, in milliseconds: a
 * provider can commit seconds after a short client timeout fired.
 */
const DEFAULT_SETTLE_MS = 5_000;

/**
 * Sends calls with signing, timeouts, retries and verify-before-resend: before a POST
 * that may have landed (timeout, reset, 5xx) is sent again, its merchant reference is
 * looked up, in direct mode for a whole settle window, so a request the service did
 * process, even late, is never sent twice.
 */
export class Transport {
  readonly #settings: TransportSettings;
  readonly #base: string;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
    this.#base = settings.baseUrl.replace(/\/+$/, '');
  }

  /**
   * Runs one logical call: each attempt signed afresh, retried on connection errors,
   * timeouts, 408, 429 and 5xx as `spec.retry` allows, with backoff or `Retry-After`.
   * A `verify` policy looks the record up before any resend after an ambiguous failure:
   * with a reference in direct mode through the settle window (`settleMs`, counted from
   * the failure), resending only when the record is still absent at its end; a resend
   * then refused because the reference exists is looked up again, never the response.
   *
   * @returns the response, or the record a lookup found (`recovered`).
   * @throws {APIError} for a final error status; {@link ConnectionError} or
   *   {@link TimeoutError} when no response arrived in the end, or the call's deadline ended
   *   inside the settle window; {@link OutcomeUnknownError} when a resend was refused
   *   because the reference exists and the record stayed unreadable through the window;
   *   {@link PaymentsError} when a lookup failed; {@link AbortError}.
   */
  async call(spec: CallSpec): Promise<CallResult> {
    const settings = this.#settings;
    const started = settings.now();
    let url = this.#base + spec.path;
    if (spec.query !== undefined) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(spec.query)) {
        if (value !== undefined) query.set(name, String(value));
      }
      url += `?${query}`;
    }
    const event = {
      method: spec.method,
      url,
      attempt: 0,
      requestId: spec.requestId ?? newRequestId(),
    };
    const rawBody = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      [REQUEST_ID_HEADER]: event.requestId,
    };
    if (rawBody !== undefined) headers['Content-Type'] = 'application/json';
    if (settings.credentials.kind === 'bearer') {
      headers.Authorization = `Bearer ${settings.credentials.token}`;
      if (spec.method !== 'GET')
        headers['Idempotency-Key'] = spec.idempotencyKey ?? crypto.randomUUID();
    }
    const budget = spec.deadlineMs ?? settings.deadlineMs;
    const deadlineAt = budget === undefined ? Number.POSITIVE_INFINITY : started + budget;
    const policy = spec.retry;
    // Through the gateway, its idempotency key and its own settle window make the resend
    // safe: one lookup, as before. In direct mode nothing else stands between a resend
    // and a second payout.
    const settleMs =
      policy.kind !== 'verify' ||
      policy.reference === undefined ||
      settings.credentials.kind !== 'signature'
        ? 0
        : (settings.settleMs ?? Math.max(DEFAULT_SETTLE_MS, spec.timeoutMs ?? settings.timeoutMs));
    // Set once an attempt may have been carried out: a resend refused because the
    // reference exists then most likely met this call's own record, not another's.
    let mayHaveLanded = false;
    for (;;) {
      event.attempt++;
      const outcome = await sendAttempt(settings, spec, { ...event }, headers, rawBody, deadlineAt);
      if (outcome instanceof PaymentsError === false) return outcome;
      const error = outcome;
      // What the waits and lookups after a failure need: built only once one failed.
      const timing: SettleTiming = {
        now: settings.now,
        random: settings.random,
        signal: spec.signal,
        deadlineAt,
        aborted: () =>
          new AbortError(`Request aborted: ${event.method} ${event.url}`, {
            cause: spec.signal?.reason,
          }),
      };
      if (policy.kind === 'verify' && mayHaveLanded && error instanceof DuplicateReferenceError) {
        // Look again, never answer "duplicate": the record may not be readable yet.
        const settled = await lookUpUntilSettled(policy.lookup, settleMs, timing).catch(
          lookupFailed(error, event),
        );
        if (typeof settled === 'object') return { kind: 'recovered', value: settled.record };
        throw new OutcomeUnknownError(
          `${event.method} ${event.url}: the resend was refused because reference ` +
            `${policy.reference} exists, but its record could not be read within ${settleMs} ms`,
          policy.reference ?? '',
          { method: event.method, url: event.url, requestId: event.requestId, cause: error },
        );
      }
      if (error.status !== undefined && !isRetryableStatus(error.status)) throw error;
      const wait =
        retryAfterMs(error.headers, settings.now()) ??
        backoffDelayMs(event.attempt, { random: settings.random });
      // 408 and 429 mean "not processed": only other failures may have landed.
      const ambiguous = error.status !== 408 && error.status !== 429;
      const retryable =
        event.attempt <= settings.maxRetries &&
        wait !== Number.POSITIVE_INFINITY &&
        (policy.kind !== 'never' || !ambiguous) &&
        settings.now() + wait < deadlineAt;
      if (!retryable) throw error;
      await delay(wait, spec.signal, timing.aborted);
      if (policy.kind === 'verify' && ambiguous) {
        mayHaveLanded = true;
        // The window counts from the failure; its first lookup comes after the wait.
        const settled = await lookUpUntilSettled(
          policy.lookup,
          Math.max(0, settleMs - wait),
          timing,
        ).catch(lookupFailed(error, event));
        if (typeof settled === 'object') return { kind: 'recovered', value: settled.record };
        // The budget ended before the window did: a resend could pay twice.
        if (settled === 'unsettled') throw error;
      }
    }
  }
}

/**
 * Wraps a failed lookup: the call's own failure stays the message, the lookup's is the
 * cause. An abort passes through as it is.
 */
function lookupFailed(error: PaymentsError, event: RequestEvent) {
  return (cause: unknown): never => {
    if (cause instanceof AbortError) throw cause;
    throw new RedactedError(
      `${error.message}; looking the reference up before resending failed too`,
      { method: event.method, url: event.url, requestId: event.requestId, cause },
    );
  };
}
