// What the client's hooks and logger receive: one event before and one after each attempt.
import type { PaymentsError } from '../errors.ts';

/** What the `onRequest` hook receives before each attempt. */
export interface RequestEvent {
  /** HTTP method of the call (`GET`, `POST`, `PATCH`). */
  method: string;
  /** The URL, query included, with email addresses and account numbers masked. */
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
  /**
   * The attempt's failure: its message, URL and issues are masked; its `rawBody` is not,
   * and is left out when the error is serialized (it is not enumerable).
   */
  error?: PaymentsError;
}

/**
 * A log sink. It receives the hook events (method, URL, attempt, status, elapsed ms,
 * request id) and never a header, a body, the secret, a signature, an email address or a
 * full account number (masked in the URL and in an error's message).
 */
export interface Logger {
  /**
   * One line per attempt and per answer.
   *
   * @param message - what happened, in words.
   * @param fields - the hook event it describes.
   */
  debug(message: string, fields: RequestEvent | ResponseEvent): void;
}
