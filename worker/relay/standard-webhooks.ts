/**
 * Standard Webhooks signatures of deliveries:
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "${id}.${timestamp}.${body}">`, keyed
 * with the base64-decoded part of the subscription's `whsec_` secret, so subscribers
 * verify with any Standard Webhooks library.
 */

const SECRET_PREFIX = 'whsec_';
const ENCODER = new TextEncoder();

/** Input of {@link standardWebhookHeaders}. */
interface StandardWebhookMessage {
  /** `webhook-id`: the event id (stable across retries, the subscriber's dedup key). */
  readonly id: string;
  /** `webhook-timestamp`: unix seconds of this attempt. */
  readonly timestamp: number;
  /** The exact body sent. */
  readonly body: string;
  /** `whsec_` secrets to sign with: the current one, then the previous one while valid. */
  readonly secrets: readonly string[];
}

/**
 * One signature: `v1,<base64>`.
 *
 * @param secret - a `whsec_<base64>` secret (a bare base64 secret is accepted too).
 * @param content - `${id}.${timestamp}.${body}`.
 * @returns the signature with its version prefix.
 * @throws {Error} when the secret is not base64 (a stored secret is always generated valid).
 */
async function signStandardWebhook(secret: string, content: string): Promise<string> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = await crypto.subtle.importKey(
    'raw',
    base64ToBytes(encoded),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, ENCODER.encode(content));
  return `v1,${bytesToBase64(new Uint8Array(mac))}`;
}

/**
 * The headers of a delivery: `webhook-id`, `webhook-timestamp`, `webhook-signature`
 * (one `v1,` signature per secret, space-separated, as the scheme allows during a
 * rotation) and `Content-Type: application/json`.
 *
 * @param message - id, timestamp (unix seconds), body and secrets.
 * @returns the headers to send.
 *
 * @example
 * ```ts
 * const headers = await standardWebhookHeaders({ id: event.eventId, timestamp: unixNow, body, secrets: [secret] });
 * ```
 */
export async function standardWebhookHeaders(message: StandardWebhookMessage): Promise<Headers> {
  const content = `${message.id}.${message.timestamp}.${message.body}`;
  const signatures = await Promise.all(
    message.secrets.map((secret) => signStandardWebhook(secret, content)),
  );
  return new Headers({
    'Content-Type': 'application/json',
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': signatures.join(' '),
  });
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
