// Signing inside autocannon's `setupRequest`, which is synchronous: a pool signed in
// advance runs dry when a Worker turns out faster than it was sized for, and a throw
// there takes the whole run down. So the load generator signs each request as it is
// sent, with node:crypto's synchronous HMAC, after checking it agrees with the SDK.
import { createHmac } from 'node:crypto';
import { type SignatureHeaders, signRequest } from '../lib/signing.ts';

/** The sandbox's merchant credentials (`.dev.vars.example`). */
export const CREDENTIALS = { keyId: 'sandbox-key', secret: 'sandbox-secret' };

/**
 * The headers {@link signRequest} would give `body` now, computed synchronously.
 *
 * @param timestamp - unix seconds. @default now
 */
export function signSync(
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
): SignatureHeaders {
  const signature = createHmac('sha256', CREDENTIALS.secret)
    .update(`${timestamp}:${body}`)
    .digest('hex');
  return {
    'X-Key-Id': CREDENTIALS.keyId,
    'X-Timestamp': String(timestamp),
    'X-Signature': signature,
  };
}

/**
 * Checks {@link signSync} against the SDK's `signRequest`, so the load is signed the way
 * the gateway signs.
 *
 * @throws when they differ.
 */
export async function assertSignSyncMatchesSdk(): Promise<void> {
  const body = JSON.stringify({ reference: 'check', amount: 1 });
  const timestamp = 1_700_000_000;
  const expected = await signRequest({ ...CREDENTIALS, body, timestamp });
  const actual = signSync(body, timestamp);
  const names = ['X-Key-Id', 'X-Timestamp', 'X-Signature'] as const;
  if (names.some((name) => actual[name] !== expected[name])) {
    throw new Error(`signSync differs from signRequest: ${JSON.stringify({ actual, expected })}`);
  }
}
