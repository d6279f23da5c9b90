/**
 * Request senders shared by the sandbox contract tests: a create endpoint sent with
 * valid bodies from a `payloads.ts` builder, and a list endpoint sent with a query.
 */
import { expectSuccess } from './expect-api.ts';
import type { ApiResponse, SandboxClient } from './sandbox-client.ts';

/** Builds a valid request body; `overrides` vary it (see `payloads.ts`). */
export type BodyBuilder = (overrides?: Record<string, unknown>) => Record<string, unknown>;

/** Signed `POST` requests to one create endpoint. */
export interface CreationRequests {
  /** Sends `build(overrides)`; the response is returned unchecked. */
  send(overrides?: Record<string, unknown>): Promise<ApiResponse>;
  /** Sends `build(overrides)` and asserts a 200 `status: 'success'` answer. */
  create(overrides?: Record<string, unknown>): Promise<ApiResponse>;
}

/**
 * Signed `POST path` requests with valid bodies.
 *
 * @param api - the sandbox client (a fixture handle is fine: nothing is sent until called).
 * @param path - e.g. `/payments/initialize`.
 * @param build - the body builder, e.g. `paymentBody`.
 * @example
 * ```ts
 * const { send, create } = creationRequests(api, '/payments/initialize', paymentBody);
 * ```
 */
export function creationRequests(
  api: SandboxClient,
  path: string,
  build: BodyBuilder,
): CreationRequests {
  const send = (overrides: Record<string, unknown> = {}) =>
    api.call('POST', path, build(overrides));
  return {
    send,
    create: async (overrides = {}) => {
      const res = await send(overrides);
      expectSuccess(res);
      return res;
    },
  };
}

/**
 * A signed `GET path<query>` sender for a list endpoint.
 *
 * @param path - e.g. `/merchants/refunds`.
 * @returns a function taking the query string, `''` or e.g. `?page=2`.
 */
export function listRequest(
  api: SandboxClient,
  path: string,
): (query: string) => Promise<ApiResponse> {
  return (query) => api.call('GET', `${path}${query}`);
}
