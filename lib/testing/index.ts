/**
 * edgepay/testing: the sandbox emulator of the whole payments API (docs/sandbox.md), a
 * plain fetch handler with in-memory state ({@link createSandbox}), to pass as a
 * {@link edgepay!PaymentsClient}'s `fetch` or to serve over HTTP.
 *
 * @module edgepay/testing
 */
import { createCore } from './core.ts';
import { ConnectionDroppedError, handleRequest } from './handle.ts';
import { resolveOptions, type SandboxOptions } from './options.ts';
import { settleDue } from './settlement.ts';

export type { RequestLogEntry } from './request-log.ts';
export type { SandboxOptions };
export { ConnectionDroppedError };

/** A sandbox emulator: a plain fetch handler with in-memory state, usable from any runtime. */
export interface Sandbox {
  /**
   * Answers one request like the payments API (every endpoint of the spec), the hosted
   * checkout page (`/checkout/{reference}`) and the test controls (`/__sandbox/*`).
   * Every request outside those two is recorded in the request log
   * (`GET /__sandbox/requests`). Never rejects, except with
   * {@link ConnectionDroppedError} under fault injection.
   */
  fetch(request: Request): Promise<Response>;
  /**
   * Settles every processing item whose time has come (sandbox clock) and waits until
   * every queued webhook delivery has finished. Servers call it periodically (the Node
   * server every 250 ms); tests `await` it before asserting webhook deliveries.
   */
  tick(): Promise<void>;
  /**
   * Waits until every timing window of the fault rules has closed (docs/sandbox.md,
   * "Timing faults"): deferred commits (`error_then_commit`, `drop_then_commit`)
   * processed, `visible_after` and `webhook_early` lags over, `final_after` settlements
   * and `delay`ed requests done, including windows those opened; then settles what is due
   * and waits for the webhook deliveries in flight. Real time passes while it waits (at
   * most the longest `after_ms`); it does not wait for webhook retries. Lets an in-process
   * test assert before and after a window without sleeping.
   */
  idle(): Promise<void>;
  /**
   * Cancels every pending timer: deferred commits never run, read lags are left as they
   * are, webhook retries stop, held requests resume. Servers call it when they stop. The
   * timers never keep a process alive anyway, except a held request, as a request would.
   */
  close(): void;
}

/**
 * Creates a stateful, in-memory emulator of the payments API that runs on any runtime
 * with Web APIs (Node, Deno, Bun, workerd, browsers). It verifies request signatures,
 * implements every endpoint and state machine of the spec with exact money, emits
 * signed webhooks, serves a checkout page and offers `/__sandbox/` controls (docs/sandbox.md).
 * `GET /__sandbox/requests[?request_id=]` shows exactly what reached the API: the last
 * 500 requests, oldest first, with method, path, query, headers (credentials such as
 * `Authorization` redacted), the first 2 KiB of the body, request id, arrival time
 * (sandbox clock) and the status answered; see {@link RequestLogEntry}.
 *
 * @param options - credentials, opening balance (major units), clock (ms), fetch for
 *   webhooks, random source, settlement delay (seconds); see {@link SandboxOptions}.
 * @returns the sandbox.
 * @throws {RangeError} on an invalid `openingBalance` or `settleAfterSec`.
 *
 * @example
 * ```ts
 * import { createSandbox } from 'edgepay/testing';
 * import { signRequest } from 'edgepay';
 *
 * const sandbox = createSandbox({ webhookUrl: 'https://example.test/webhooks' });
 * const body = JSON.stringify({ email: 'ada@example.com', amount: '5000.00', currency: 'NGN' });
 * const headers = await signRequest({ keyId: 'sandbox-key', secret: 'sandbox-secret', body });
 * const response = await sandbox.fetch(
 *   new Request('http://sandbox.test/payments/initialize', {
 *     method: 'POST',
 *     headers: { ...headers, 'Content-Type': 'application/json' },
 *     body,
 *   }),
 * );
 * const { authorization_url, reference } = await response.json();
 * ```
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const core = createCore(resolveOptions(options));
  return {
    fetch: (request) => handleRequest(core, request),
    async tick() {
      settleDue(core);
      await core.flush();
    },
    async idle() {
      await core.timers.idle();
      settleDue(core);
      await core.flush();
    },
    close() {
      core.timers.close();
    },
  };
}
