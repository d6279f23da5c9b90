import { createAPIError } from '../api-errors.ts';
import { AbortError, ConnectionError, PaymentsError, TimeoutError } from '../errors.ts';
import { signRequest } from '../signing.ts';
import { backoffDelayMs, isRetryableStatus, retryAfterMs } from './retry-timing.ts';

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

/** A log sink; edgepay never passes it secrets, signatures or full account numbers. */
export interface Logger {
  debug(message: string, fields: Record<string, unknown>): void;
}

/** Settings of a {@link Transport}, resolved by the client. */
export interface TransportSettings {
  baseUrl: string;
  credentials: Credentials;
  fetch: typeof fetch;
  subtle: SubtleCrypto | undefined;
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
  /** Writes with nothing to look up: never resent after an ambiguous failure. */
  | { kind: 'never' };

/** One logical call. */
export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH';
  /** Path with every dynamic segment already encoded (see `path`). */
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  /** Sent without signature headers (spec: GET /banks). */
  unsigned?: boolean;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Gateway mode: the `Idempotency-Key`, reused by every attempt of this call. */
  idempotencyKey?: string | undefined;
}

/** The answer of a call: a successful response, or the record found by verify-before-resend. */
export type CallResult =
  | {
      kind: 'response';
      method: string;
      url: string;
      status: number;
      headers: Headers;
      rawBody: string;
      body: unknown;
      requestId: string;
    }
  | { kind: 'recovered'; value: unknown };

/** Sends calls with signing, timeouts, retries and verify-before-resend (DESIGN 2: reliability). */
export class Transport {
  readonly settings: TransportSettings;

  constructor(settings: TransportSettings) {
    this.settings = settings;
  }

  /**
   * Runs one logical call: each attempt signed afresh, retried on connection errors,
   * timeouts, 408, 429 and 5xx as `spec.retry` allows.
   *
   * @throws {APIError} for an error status that is final; {@link ConnectionError},
   *   {@link TimeoutError} or {@link AbortError} when no answer arrived in the end.
   */
  async call(spec: CallSpec): Promise<CallResult> {
    const { settings } = this;
    const started = settings.now();
    const url = this.url(spec);
    const requestId = crypto.randomUUID();
    const rawBody = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const idempotencyKey =
      settings.credentials.kind === 'bearer' && spec.method !== 'GET'
        ? (spec.idempotencyKey ?? crypto.randomUUID())
        : undefined;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(
        spec,
        url,
        rawBody,
        attempt,
        requestId,
        idempotencyKey,
        started,
      );
      if (outcome.kind !== 'failure') return outcome;
      const { error, retryAfter } = outcome;
      if (!this.mayRetry(spec, attempt, error, retryAfter, started)) throw error;
      await this.sleep(this.delayBeforeRetry(attempt, retryAfter), spec.signal);
      // The first attempt may have landed: look the reference up before sending again.
      if (spec.retry.kind === 'verify' && isAmbiguous(error)) {
        const found = await spec.retry.lookup().catch((lookupError: unknown) => {
          throw new PaymentsError(
            `${error.message}; the reference lookup before resending failed too`,
            {
              ...contextOf(error),
              cause: lookupError,
            },
          );
        });
        if (found !== undefined) return { kind: 'recovered', value: found };
      }
    }
  }

  private url(spec: CallSpec): string {
    const url = new URL(
      spec.path.replace(/^\//, ''),
      `${this.settings.baseUrl.replace(/\/+$/, '')}/`,
    );
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  private async attempt(
    spec: CallSpec,
    url: string,
    rawBody: string | undefined,
    attempt: number,
    requestId: string,
    idempotencyKey: string | undefined,
    started: number,
  ): Promise<CallResult | Failure> {
    const { settings } = this;
    const headers = await this.headers(spec, rawBody, requestId, idempotencyKey);
    const timeoutMs = this.attemptTimeout(spec, started);
    const context = { method: spec.method, url, requestId };
    settings.onRequest?.({ ...context, attempt });
    settings.logger?.debug('edgepay request', { ...context, attempt });
    const attemptStart = settings.now();
    const report = (status: number | undefined, error?: PaymentsError) => {
      const elapsedMs = settings.now() - attemptStart;
      settings.onResponse?.({
        ...context,
        attempt,
        status,
        elapsedMs,
        ...(error === undefined ? {} : { error }),
      });
      settings.logger?.debug('edgepay response', { ...context, attempt, status, elapsedMs });
    };
    const exchange = await this.exchange(spec, url, headers, rawBody, timeoutMs);
    if (!('response' in exchange)) {
      const error = this.classify(exchange.error, exchange.signal, spec, context, timeoutMs);
      report(undefined, error);
      if (error instanceof AbortError) throw error;
      return { kind: 'failure', error, retryAfter: undefined };
    }
    const { response, text } = exchange;
    report(response.status);
    if (response.ok) {
      return {
        kind: 'response',
        method: spec.method,
        url,
        status: response.status,
        headers: response.headers,
        rawBody: text,
        body: parseJson(text),
        requestId: response.headers.get('x-request-id') ?? requestId,
      };
    }
    const error = createAPIError({
      method: spec.method,
      url,
      status: response.status,
      headers: response.headers,
      rawBody: text,
    });
    if (!isRetryableStatus(response.status)) throw error;
    return { kind: 'failure', error, retryAfter: retryAfterMs(response.headers, settings.now()) };
  }

  /** One fetch with its body read, under one timeout and the caller's signal. */
  private async exchange(
    spec: CallSpec,
    url: string,
    headers: Record<string, string>,
    rawBody: string | undefined,
    timeoutMs: number,
  ): Promise<{ response: Response; text: string } | { error: unknown; signal: AbortSignal }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutMarker), timeoutMs);
    const onAbort = () => controller.abort(spec.signal?.reason);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const response = await this.settings.fetch(url, {
        method: spec.method,
        headers,
        ...(rawBody === undefined ? {} : { body: rawBody }),
        signal: controller.signal,
        // Never follow: a redirect would carry signed headers elsewhere. workerd has no 'error'.
        redirect: 'manual',
      });
      return { response, text: await response.text() };
    } catch (error) {
      return { error, signal: controller.signal };
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async headers(
    spec: CallSpec,
    rawBody: string | undefined,
    requestId: string,
    idempotencyKey: string | undefined,
  ): Promise<Record<string, string>> {
    const { credentials } = this.settings;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Request-Id': requestId,
    };
    if (rawBody !== undefined) headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    if (credentials.kind === 'bearer') {
      headers.Authorization = `Bearer ${credentials.token}`;
    } else if (spec.unsigned !== true) {
      Object.assign(
        headers,
        await signRequest({
          keyId: credentials.keyId,
          secret: credentials.secret,
          body: rawBody ?? '',
          now: this.settings.now,
          ...(this.settings.subtle === undefined ? {} : { subtle: this.settings.subtle }),
        }),
      );
    }
    return headers;
  }

  private attemptTimeout(spec: CallSpec, started: number): number {
    const timeoutMs = spec.timeoutMs ?? this.settings.timeoutMs;
    const { deadlineMs } = this.settings;
    if (deadlineMs === undefined) return timeoutMs;
    return Math.max(0, Math.min(timeoutMs, deadlineMs - (this.settings.now() - started)));
  }

  private classify(
    caught: unknown,
    signal: AbortSignal,
    spec: CallSpec,
    context: { method: string; url: string; requestId: string },
    timeoutMs: number,
  ): PaymentsError {
    const where = `${context.method} ${context.url}`;
    if (signal.aborted && signal.reason === timeoutMarker) {
      return new TimeoutError(`Request timed out after ${timeoutMs} ms: ${where}`, timeoutMs, {
        ...context,
        cause: caught,
      });
    }
    if (spec.signal?.aborted) {
      return new AbortError(`Request aborted: ${where}`, { ...context, cause: spec.signal.reason });
    }
    return new ConnectionError(`Connection failed: ${where}`, { ...context, cause: caught });
  }

  private mayRetry(
    spec: CallSpec,
    attempt: number,
    error: PaymentsError,
    retryAfter: number | undefined,
    started: number,
  ): boolean {
    const { settings } = this;
    if (attempt > settings.maxRetries) return false;
    if (retryAfter === Number.POSITIVE_INFINITY) return false;
    // 408 and 429 mean the request was not processed: safe to resend even without a reference.
    if (spec.retry.kind === 'never' && isAmbiguous(error)) return false;
    if (settings.deadlineMs === undefined) return true;
    const wait = this.delayBeforeRetry(attempt, retryAfter);
    return settings.now() - started + wait < settings.deadlineMs;
  }

  private delayBeforeRetry(attempt: number, retryAfter: number | undefined): number {
    return retryAfter ?? backoffDelayMs(attempt, { random: this.settings.random });
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted)
        return reject(new AbortError('Request aborted', { cause: signal.reason }));
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new AbortError('Request aborted', { cause: signal?.reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

const timeoutMarker = Symbol('edgepay.timeout');

type Failure = { kind: 'failure'; error: PaymentsError; retryAfter: number | undefined };

/** Whether the request may have been processed: anything but 408 and 429. */
function isAmbiguous(error: PaymentsError): boolean {
  return error.status !== 408 && error.status !== 429;
}

function contextOf(error: PaymentsError) {
  return {
    ...(error.method === undefined ? {} : { method: error.method }),
    ...(error.url === undefined ? {} : { url: error.url }),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.headers === undefined ? {} : { headers: error.headers }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.rawBody === undefined ? {} : { rawBody: error.rawBody }),
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
