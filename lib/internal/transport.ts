import { createAPIError } from '../api-errors.ts';
import { AbortError, ConnectionError, PaymentsError, TimeoutError } from '../errors.ts';
import { signRequest } from '../signing.ts';
import { delay } from './delay.ts';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.ts';
import { backoffDelayMs, isRetryableStatus, retryAfterMs } from './retry-timing.ts';
import { untilAborted } from './until-aborted.ts';

/** How the transport authenticates: HMAC signing with the secret, or a gateway bearer token. */
export type Credentials =
  | { kind: 'signature'; keyId: string; secret: string }
  | { kind: 'bearer'; token: string };

/** What the `onRequest` hook receives before each attempt. */
export interface RequestEvent {
  method: string;
  url: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** `X-Request-Id` sent with every attempt of the call. */
  requestId: string;
}

/** What the `onResponse` hook receives after each attempt. */
export interface ResponseEvent extends RequestEvent {
  /** HTTP status, or `undefined` when no response arrived (see `error`). */
  status: number | undefined;
  /** Wall time of the attempt in milliseconds, body read included. */
  elapsedMs: number;
  error?: PaymentsError;
}

/**
 * A log sink. It receives the hook events (method, URL, attempt, status, elapsed ms,
 * request id) and never a header, a body, the secret, a signature or an account number.
 */
export interface Logger {
  debug(message: string, fields: RequestEvent | ResponseEvent): void;
}

/** Settings of a {@link Transport}, resolved by the client. */
export interface TransportSettings {
  baseUrl: string;
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
  onRequest: ((event: RequestEvent) => void) | undefined;
  onResponse: ((event: ResponseEvent) => void) | undefined;
  logger: Logger | undefined;
}

/** When a request may be sent again after a failure. */
export type RetryPolicy =
  /** Reads: always safe to resend. */
  | { kind: 'safe' }
  /**
   * Writes with a merchant reference: after an ambiguous failure, look the reference up
   * first; a found record is the answer ("verify before resend").
   */
  | { kind: 'verify'; lookup: () => Promise<unknown> }
  /** Writes with nothing to look up: resent only after 408 or 429 (not processed). */
  | { kind: 'never' };

/** One logical call. */
export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH';
  /** Path from the base, starting with `/`, every dynamic segment already encoded (see `path`). */
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  /** Sent without signature headers (spec: GET /banks). */
  unsigned?: boolean | undefined;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
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

/** The answer of a call: a successful response, or the record found by verify-before-resend. */
export type CallResult = CallResponse | { kind: 'recovered'; value: unknown };

const TIMED_OUT = Symbol('edgepay.timeout');

/**
 * Sends calls with signing, timeouts, retries and verify-before-resend: before a POST
 * that may have landed (timeout, reset, 5xx) is sent again, its merchant reference is
 * looked up, so a request the service did process is never sent twice.
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
   *
   * @throws {APIError} for a final error status; {@link ConnectionError} or
   *   {@link TimeoutError} when no answer arrived in the end; {@link AbortError}.
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
    for (;;) {
      event.attempt++;
      const outcome = await this.#attempt(spec, { ...event }, headers, rawBody, started);
      if (outcome instanceof PaymentsError === false) return outcome;
      const error = outcome;
      const wait =
        retryAfterMs(error.headers, settings.now()) ??
        backoffDelayMs(event.attempt, { random: settings.random });
      // 408 and 429 mean "not processed": only other failures may have landed.
      const ambiguous = error.status !== 408 && error.status !== 429;
      const retryable =
        event.attempt <= settings.maxRetries &&
        wait !== Number.POSITIVE_INFINITY &&
        (spec.retry.kind !== 'never' || !ambiguous) &&
        (settings.deadlineMs === undefined ||
          settings.now() - started + wait < settings.deadlineMs);
      if (!retryable) throw error;
      await delay(
        wait,
        spec.signal,
        () =>
          new AbortError(`Request aborted: ${event.method} ${event.url}`, {
            cause: spec.signal?.reason,
          }),
      );
      if (spec.retry.kind === 'verify' && ambiguous) {
        const found = await spec.retry.lookup().catch((cause: unknown) => {
          throw new PaymentsError(
            `${error.message}; looking the reference up before resending failed too`,
            {
              method: event.method,
              url: event.url,
              requestId: event.requestId,
              cause,
            },
          );
        });
        if (found !== undefined) return { kind: 'recovered', value: found };
      }
    }
  }

  /** One attempt: a response, or the retryable failure (final failures throw). */
  async #attempt(
    spec: CallSpec,
    event: RequestEvent,
    baseHeaders: Record<string, string>,
    rawBody: string | undefined,
    started: number,
  ): Promise<CallResponse | PaymentsError> {
    const settings = this.#settings;
    const { credentials } = settings;
    const headers =
      credentials.kind === 'signature' && spec.unsigned !== true
        ? {
            ...baseHeaders,
            ...(await signRequest({
              keyId: credentials.keyId,
              secret: credentials.secret,
              body: rawBody ?? '',
              now: settings.now,
              ...(settings.subtle === undefined ? {} : { subtle: settings.subtle }),
            })),
          }
        : baseHeaders;
    let timeoutMs = spec.timeoutMs ?? settings.timeoutMs;
    if (settings.deadlineMs !== undefined) {
      timeoutMs = Math.max(
        0,
        Math.min(timeoutMs, settings.deadlineMs - (settings.now() - started)),
      );
    }
    settings.onRequest?.(event);
    settings.logger?.debug('edgepay request', event);
    const attemptStarted = settings.now();
    const report = (status: number | undefined, error?: PaymentsError) => {
      if (settings.onResponse === undefined && settings.logger === undefined) return;
      const done: ResponseEvent = { ...event, status, elapsedMs: settings.now() - attemptStarted };
      if (error !== undefined) done.error = error;
      settings.onResponse?.(done);
      settings.logger?.debug('edgepay response', done);
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
    const onAbort = () => controller.abort(spec.signal?.reason);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    let response: Response | undefined;
    let text: string;
    try {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const fetching = settings.fetch(event.url, {
        method: spec.method,
        headers,
        ...(rawBody === undefined ? {} : { body: rawBody }),
        signal: controller.signal,
        // Never follow: a redirect would carry signed headers elsewhere. workerd has no 'error'.
        redirect: 'manual',
      });
      // A response that arrives after the wait was given up is not read: free its connection.
      fetching
        .then((late) => (controller.signal.aborted ? late.body?.cancel() : undefined))
        .catch(() => {});
      // Race the fetch and the body read against the signal: not every fetch (or injected
      // Response) honours it, and the timeout must hold from the request to the last byte.
      response = await untilAborted(fetching, controller.signal);
      text = await untilAborted(response.text(), controller.signal);
    } catch (cause) {
      // Free the connection of a body we will not read.
      response?.body?.cancel().catch(() => {});
      const where = `${event.method} ${event.url}`;
      const context = { method: event.method, url: event.url, requestId: event.requestId, cause };
      const error =
        controller.signal.reason === TIMED_OUT
          ? new TimeoutError(
              `Request timed out after ${timeoutMs} ms: ${where}`,
              timeoutMs,
              context,
            )
          : spec.signal?.aborted
            ? new AbortError(`Request aborted: ${where}`, { ...context, cause: spec.signal.reason })
            : new ConnectionError(`Connection failed: ${where}`, context);
      report(undefined, error);
      if (error instanceof AbortError) throw error;
      return error;
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
    report(response.status);
    if (response.ok) {
      return {
        kind: 'response',
        method: event.method,
        url: event.url,
        status: response.status,
        headers: response.headers,
        rawBody: text,
        body: parseJson(text),
        requestId: response.headers.get(REQUEST_ID_HEADER) ?? event.requestId,
      };
    }
    const error = createAPIError({
      ...event,
      status: response.status,
      headers: response.headers,
      rawBody: text,
    });
    if (isRetryableStatus(response.status)) return error;
    throw error;
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
