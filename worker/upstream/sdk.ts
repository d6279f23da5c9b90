// The payments API as the gateway reads it for itself (confirming webhooks, recovering
// stale idempotency claims): through the SDK, so a response is parsed and normalized the
// same way here as in any merchant's code.
import { PaymentsClient } from '../../lib/index.ts';
import { settingsOf } from '../config.ts';

const clients = new WeakMap<Env, PaymentsClient>();

/**
 * The SDK client of the upstream, built from the Worker's settings (`UPSTREAM_BASE_URL`,
 * `UPSTREAM_KEY_ID`, `UPSTREAM_SECRET`, `UPSTREAM_TIMEOUT_MS` per attempt) and kept per
 * `env` object. It sends with the Worker's own `fetch` and never retries: the gateway owns
 * the retry policy of its callers and of the webhook provider.
 *
 * @param env - the Worker's bindings.
 * @returns the client.
 * @throws {ConfigurationError} 503 when the settings are invalid.
 */
export function upstreamClient(env: Env): PaymentsClient {
  let client = clients.get(env);
  if (client === undefined) {
    const config = settingsOf(env).upstream;
    client = new PaymentsClient({
      keyId: config.keyId,
      secret: config.secret,
      baseUrl: config.baseUrl,
      timeoutMs: config.timeoutMs,
      maxRetries: 0,
      fetch: (input, init) => fetch(input, init),
    });
    clients.set(env, client);
  }
  return client;
}
