import { signRequest } from '../../lib/index.ts';
import { untilAborted } from '../../lib/shared.ts';
import { InternalError, UpstreamTimeoutError, UpstreamUnreachableError } from '../http/errors.ts';

/** A `fetch` implementation. */
type FetchLike = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** A request to the payment service, prepared by the proxy. */
export interface UpstreamRequest {
  readonly method: string;
  readonly url: URL;
  /** Headers to send as they are (the signature headers are added here). */
  readonly headers: Headers;
  /** The exact body bytes, signed and sent unchanged; `undefined` for none. */
  readonly body: Uint8Array | undefined;
  /** `signed` adds `X-Key-Id`/`X-Timestamp`/`X-Signature` (docs/payments-api.md, "Authentication"). */
  readonly auth: 'signed' | 'none';
}

/** The upstream's response, body fully read. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

/** Options of {@link sendUpstream}. */
interface SendUpstreamOptions {
  /** `UPSTREAM_KEY_ID`. */
  readonly keyId: string;
  /** `UPSTREAM_SECRET`: the HMAC key, never sent or logged. */
  readonly secret: string;
  /** Limit for the whole exchange including the body read, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * How to reach the upstream. The gateway always uses the default; unit tests pass
   * one only for answers no real upstream in the test setup gives (a redirect, a body
   * stalling after the headers). @default the global fetch
   */
  readonly fetch?: FetchLike;
}

/**
 * Sends one request to the payment service: signs the exact body bytes afresh with
 * `signRequest`, does not follow redirects (signed headers must not reach another
 * host), and reads the whole body within the timeout (a timeout is a 504, not a hang).
 *
 * @param request - method, URL, headers, body bytes and whether to sign.
 * @param options - credentials, timeout (ms) and optionally `fetch`.
 * @returns status, headers and body bytes, whatever the status (4xx/5xx included).
 * @throws {UpstreamTimeoutError} 504 when the response (body included) takes longer than `timeoutMs`.
 * @throws {UpstreamUnreachableError} 502 when the connection fails.
 * @throws {InternalError} 500 when a signed request lacks `UPSTREAM_KEY_ID`/`UPSTREAM_SECRET`.
 */
export async function sendUpstream(
  request: UpstreamRequest,
  options: SendUpstreamOptions,
): Promise<UpstreamResponse> {
  const headers = new Headers(request.headers);
  if (request.auth === 'signed') {
    if (!options.keyId || !options.secret) {
      throw new InternalError('UPSTREAM_KEY_ID or UPSTREAM_SECRET is not set');
    }
    const signature = await signRequest({
      keyId: options.keyId,
      secret: options.secret,
      body: request.body ?? '',
    });
    for (const [name, value] of Object.entries(signature)) headers.set(name, value);
  }
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    const response = await untilAborted(
      send(request.url, {
        method: request.method,
        headers,
        redirect: 'manual',
        signal: controller.signal,
        ...(request.body === undefined ? {} : { body: request.body }),
      }),
      controller.signal,
    );
    const body = await untilAborted(response.arrayBuffer(), controller.signal);
    return { status: response.status, headers: response.headers, body: new Uint8Array(body) };
  } catch (error) {
    if (controller.signal.aborted)
      throw new UpstreamTimeoutError(options.timeoutMs, { cause: error });
    throw new UpstreamUnreachableError({ cause: error });
  } finally {
    clearTimeout(timer);
  }
}
