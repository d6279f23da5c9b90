// One attempt of a call on the wire: signing, the timeout that covers the whole body,
// the hooks, and turning what came back (or did not) into a response or a typed failure.
import { createAPIError } from '../api-errors.ts';
import { AbortError, ConnectionError, type PaymentsError, TimeoutError } from '../errors.ts';
import { signRequest } from '../signing.ts';
import type { RequestEvent, ResponseEvent } from './hooks.ts';
import { redactPersonalData } from './redact.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import type { CallResponse, CallSpec, TransportSettings } from './transport.ts';

const TIMED_OUT = Symbol('edgepay.timeout');

/**
 * Sends one attempt of a call: signed afresh (direct mode), timed out after the attempt's
 * timeout or what is left of the call's budget, whichever is shorter, body read included,
 * and reported to the hooks.
 *
 * @param settings - the transport's settings.
 * @param spec - the call.
 * @param event - what the hooks receive (method, URL, attempt number, request id).
 * @param baseHeaders - the headers every attempt carries.
 * @param rawBody - the JSON body as sent.
 * @param deadlineAt - when the call's budget ends, epoch milliseconds (`Infinity`: none).
 * @returns the successful response, or the failure: an {@link APIError} for an error
 *   status, a {@link TimeoutError} or a {@link ConnectionError}.
 * @throws {AbortError} when the caller's signal aborts.
 */
export async function sendAttempt(
  settings: TransportSettings,
  spec: CallSpec,
  event: RequestEvent,
  baseHeaders: Record<string, string>,
  rawBody: string | undefined,
  deadlineAt: number,
): Promise<CallResponse | PaymentsError> {
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
  // The attempt gets what is left of the call's budget when that is shorter.
  const timeoutMs = Math.max(
    0,
    Math.min(spec.timeoutMs ?? settings.timeoutMs, deadlineAt - settings.now()),
  );
  const report = reporter(settings, event);
  const controller = new AbortController();
  // The wait below is given up by the timer or the caller's signal, whichever comes first.
  let giveUp: (reason: unknown) => void = () => {};
  const timer = setTimeout(() => {
    controller.abort(TIMED_OUT);
    giveUp(TIMED_OUT);
  }, timeoutMs);
  const onAbort = () => {
    controller.abort(spec.signal?.reason);
    giveUp(spec.signal?.reason);
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  // Set as soon as the response arrives, so a failed body read can free its connection.
  let arrived: Response | undefined;
  let response: Response;
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
    const reading = fetching.then(async (received) => {
      arrived = received;
      // A response that arrives after the wait was given up is not read: free its connection.
      if (controller.signal.aborted) {
        await received.body?.cancel();
        throw controller.signal.reason;
      }
      return [received, await received.text()] as const;
    });
    // Race the fetch and the body read against the timer and the signal: not every fetch (or
    // injected Response) honours the signal, and the timeout must hold from the request to
    // the last byte.
    [response, text] = await new Promise<readonly [Response, string]>((resolve, reject) => {
      giveUp = reject;
      reading.then(resolve, reject);
    });
  } catch (cause) {
    // Free the connection of a body we will not read.
    arrived?.body?.cancel().catch(() => {});
    const where = `${event.method} ${event.url}`;
    const context = { method: event.method, url: event.url, requestId: event.requestId, cause };
    const error =
      controller.signal.reason === TIMED_OUT
        ? new TimeoutError(`Request timed out after ${timeoutMs} ms: ${where}`, timeoutMs, context)
        : spec.signal?.aborted
          ? new AbortError(`Request aborted: ${where}`, { ...context, cause: spec.signal.reason })
          : new ConnectionError(
              `Connection failed: ${where} (address from ${settings.baseUrlFrom})`,
              context,
            );
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
  return createAPIError({
    ...event,
    status: response.status,
    headers: response.headers,
    rawBody: text,
  });
}

/**
 * Tells the hooks and the logger that an attempt starts, and returns how its end is told.
 * They see the URL with personal data masked, like error messages; nothing is built when no
 * hook or logger listens.
 */
function reporter(
  settings: TransportSettings,
  event: RequestEvent,
): (status: number | undefined, error?: PaymentsError) => void {
  const { onRequest, onResponse, logger } = settings;
  if (onRequest === undefined && onResponse === undefined && logger === undefined) {
    return () => {};
  }
  const seen = { ...event, url: redactPersonalData(event.url) };
  onRequest?.(seen);
  logger?.debug('edgepay request', seen);
  const started = settings.now();
  return (status, error) => {
    if (onResponse === undefined && logger === undefined) return;
    const done: ResponseEvent = { ...seen, status, elapsedMs: settings.now() - started };
    if (error !== undefined) done.error = error;
    onResponse?.(done);
    logger?.debug('edgepay response', done);
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
