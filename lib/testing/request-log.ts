// The request log (`GET /__sandbox/requests`): what reached the sandbox's API, as received.
import type { SandboxCore } from './core.ts';
import type { SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';

/** How many entries the log keeps; older ones are dropped first. */
const REQUEST_LOG_LIMIT = 500;

/** How much of a body the log keeps, in bytes (2 KiB). */
const REQUEST_LOG_BODY_BYTES = 2048;

/**
 * Headers whose values are replaced by {@link REDACTED}: caller credentials never
 * belong to the sandbox, so they are never shown. The `X-Signature` headers are the
 * sandbox's own domain and are kept.
 */
const REDACTED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
]);

/** What a redacted header value reads as. */
const REDACTED = '<redacted>';

/** How a timing fault rule acted on a logged request (request-faults.ts). */
export interface RequestFaultView {
  /** The rule's id. */
  rule: string;
  fault: string;
  /**
   * For `error_then_commit` and `drop_then_commit`: the status the deferred processing
   * ended with (null until it ran) and when it ran (sandbox time, ISO 8601).
   */
  commit_status?: number | null;
  committed_at?: string | null;
}

/** One request that reached an API endpoint, as served by `GET /__sandbox/requests`. */
export interface RequestLogEntry {
  /** HTTP method as received (`GET`, `POST`...). */
  method: string;
  /** The URL path as received (still percent-encoded). */
  path: string;
  /** The query string as received, without its `?` (`''` when there is none). */
  query: string;
  /** Header names lowercased; credentials (`authorization`, `proxy-authorization`, `cookie`) read `<redacted>`. */
  headers: Record<string, string>;
  /** The first 2 KiB of the body as UTF-8 text. */
  body: string;
  /** The request id the sandbox answered with (the incoming `X-Request-Id` or a generated one). */
  request_id: string;
  /** Sandbox time of arrival, ISO 8601. */
  received_at: string;
  /** The status answered; `null` when fault injection dropped the connection. */
  status: number | null;
  /** Present when a timing fault rule acted on the request. */
  fault?: RequestFaultView;
}

/**
 * Whether requests to `pathname` are logged: everything outside the test controls
 * (`/__sandbox/*`) and the checkout page (`/checkout/*`), including paths no route
 * matches, so a caller sees a wrong path as it reached the sandbox.
 *
 * @param pathname - the URL path.
 */
export function isLoggedPath(pathname: string): boolean {
  return !/^\/(__sandbox|checkout)(\/|$)/.test(pathname);
}

/** What {@link recordRequest} records about one request. */
export interface LoggedRequest {
  request: Request;
  url: URL;
  rawBody: Uint8Array;
  requestId: string;
  /** Sandbox time of arrival, epoch ms. */
  receivedAt: number;
  status: number | null;
  /** How a timing fault rule acted on it, if one did. */
  fault?: RequestFaultView | undefined;
}

/**
 * Appends one entry to the log, dropping the oldest past {@link REQUEST_LOG_LIMIT}.
 *
 * @param core - the sandbox.
 * @param logged - the request, its body bytes, id, arrival time, answered status and fault.
 * @returns the entry, which a deferred commit completes later.
 */
export function recordRequest(core: SandboxCore, logged: LoggedRequest): RequestLogEntry {
  const headers: Record<string, string> = {};
  logged.request.headers.forEach((value, name) => {
    headers[name] = REDACTED_HEADERS.has(name) ? REDACTED : value;
  });
  // `stream: true` holds back a character cut in half at the limit instead of
  // rendering it as U+FFFD; `ignoreBOM` keeps a leading BOM, since it was sent.
  const body = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(
    logged.rawBody.subarray(0, REQUEST_LOG_BODY_BYTES),
    { stream: true },
  );
  const log = core.state.requests;
  const entry: RequestLogEntry = {
    method: logged.request.method,
    path: logged.url.pathname,
    query: logged.url.search.replace(/^\?/, ''),
    headers,
    body,
    request_id: logged.requestId,
    received_at: iso(logged.receivedAt),
    status: logged.status,
    ...(logged.fault === undefined ? {} : { fault: logged.fault }),
  };
  log.push(entry);
  if (log.length > REQUEST_LOG_LIMIT) log.splice(0, log.length - REQUEST_LOG_LIMIT);
  return entry;
}

/**
 * `GET /__sandbox/requests[?request_id=]`: `{ status, data: RequestLogEntry[] }`, oldest
 * first, the last {@link REQUEST_LOG_LIMIT} requests that reached an API endpoint;
 * `request_id` keeps only the entries with exactly that id (parallel tests sharing
 * one sandbox each send their own `X-Request-Id` and find their requests by it).
 */
export function requestsControl(ctx: SandboxRequestContext): Response {
  const requestId = ctx.url.searchParams.get('request_id');
  const entries = ctx.core.state.requests;
  const data =
    requestId === null ? entries : entries.filter((entry) => entry.request_id === requestId);
  return json({ status: 'success', data });
}
