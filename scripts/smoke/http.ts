// One HTTP call of the smoke test, under a deadline, and the error a failed check throws.

/** Where the smoke test sends its requests and how long each may take. */
export interface SmokeTarget {
  /** The gateway's base address, without a trailing slash (`https://gateway.example`). */
  gateway: string;
  /** Deadline of each request, body included, in milliseconds. */
  timeoutMs: number;
}

/** One response, read whole: status, headers, the exact body text and its JSON when it is JSON. */
export interface SmokeResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or `undefined` when it is not JSON. */
  json: unknown;
}

/** A request of the smoke test: a path of the gateway (starting with `/`), headers, a body. */
export interface SmokeRequest {
  method: 'GET' | 'POST';
  path: string;
  /** A bearer token for `Authorization`; none sends no `Authorization` header. */
  token?: string;
  headers?: Record<string, string>;
  /** Sent as JSON (`Content-Type: application/json`), serialized exactly once by the caller. */
  body?: string;
}

/**
 * A check of the smoke test that did not hold. The report prints `message` and, when an
 * answer was read, its status and the gateway's error `code` and `message`.
 */
export class SmokeCheckError extends Error {
  override name = 'SmokeCheckError';
  /** The response that broke the check, when there was one. */
  readonly answer: SmokeResponse | undefined;

  /**
   * @param message - what was expected, e.g. `expected 200`.
   * @param answer - the response that broke it; none when the request itself failed.
   * @param options - `cause`, the network or timeout error behind a failed request.
   */
  constructor(message: string, answer?: SmokeResponse, options?: ErrorOptions) {
    super(message, options);
    this.answer = answer;
  }
}

/**
 * Sends one request to the gateway and reads the whole response before `timeoutMs` runs out.
 *
 * @param target - the gateway and the per-request deadline (milliseconds).
 * @param request - method, path, optional bearer token, headers and JSON body.
 * @returns the response; any status, 4xx and 5xx included.
 * @throws {SmokeCheckError} when no response came in time or the connection failed.
 */
export async function send(target: SmokeTarget, request: SmokeRequest): Promise<SmokeResponse> {
  const url = `${target.gateway}${request.path}`;
  const headers: Record<string, string> = { Accept: 'application/json', ...request.headers };
  if (request.token !== undefined) headers.Authorization = `Bearer ${request.token}`;
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: parseJson(text) };
  } catch (error) {
    const what = `${request.method} ${url}`;
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      throw new SmokeCheckError(`no answer within ${target.timeoutMs} ms: ${what}`);
    }
    const reason = error instanceof Error ? causeMessage(error) : String(error);
    throw new SmokeCheckError(`request failed (${reason}): ${what}`, undefined, { cause: error });
  }
}

/**
 * Checks a response's status.
 *
 * @param answer - the response read by {@link send}.
 * @param expected - the status the step requires.
 * @throws {SmokeCheckError} `expected <status>` when it differs.
 */
export function expectStatus(answer: SmokeResponse, expected: number): void {
  if (answer.status !== expected) throw new SmokeCheckError(`expected ${expected}`, answer);
}

/**
 * A field of a JSON object body.
 *
 * @param answer - the response read by {@link send}.
 * @param key - the top-level key.
 * @returns its value, or `undefined` when the body is not an object or lacks the key.
 */
export function field(answer: SmokeResponse, key: string): unknown {
  const body = answer.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  return (body as Record<string, unknown>)[key];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** undici reports "fetch failed" and keeps the reason (`connect ECONNREFUSED ...`) in `cause`. */
function causeMessage(error: Error): string {
  return error.cause instanceof Error ? error.cause.message : error.message;
}
