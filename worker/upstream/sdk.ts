// The payments API as the gateway reads it for itself (confirming webhooks, recovering
// stale idempotency claims): through the SDK, so an answer is parsed and normalized the
// same way here as in any merchant's code.
import { PaymentsClient } from '../../lib/index.ts';
import { InternalError } from '../http/errors.ts';
import { upstreamConfig } from './config.ts';

const clients = new WeakMap<Env, PaymentsClient>();

/**
 * The SDK client of the upstream, built from the Worker's settings (`UPSTREAM_BASE_URL`,
 * `UPSTREAM_KEY_ID`, `UPSTREAM_SECRET`, `UPSTREAM_TIMEOUT_MS` per attempt) and kept per
 * `env` object. It sends with the Worker's own `fetch` and never retries: the gateway owns
 * the retry policy of its callers and of the webhook provider.
 *
 * @param env - the Worker's bindings.
 * @returns the client.
 * @throws {InternalError} 500 when `UPSTREAM_KEY_ID` or `UPSTREAM_SECRET` is not set, or
 *   `UPSTREAM_BASE_URL` is invalid.
 */
export function upstreamClient(env: Env): PaymentsClient {
  let client = clients.get(env);
  if (client === undefined) {
    if (!env.UPSTREAM_KEY_ID || !env.UPSTREAM_SECRET) {
      throw new InternalError('UPSTREAM_KEY_ID or UPSTREAM_SECRET is not set');
    }
    const config = upstreamConfig(env);
    client = new PaymentsClient({
      keyId: env.UPSTREAM_KEY_ID,
      secret: env.UPSTREAM_SECRET,
      baseUrl: config.baseUrl.href,
      timeoutMs: config.timeoutMs,
      maxRetries: 0,
      fetch: (input, init) => fetch(input, init),
    });
    clients.set(env, client);
  }
  return client;
}
