/**
 * Helpers of the webhook ingress tests: a spec envelope, a request signed like the
 * provider signs (the `WEBHOOK_SECRET` binding of vitest.config.ts is `sandbox-secret`),
 * and the row count of an event in the real D1.
 */
import { env } from 'cloudflare:workers';
import { signRequest } from '../../../lib/signing.ts';
import { gatewayRequest } from '../helpers.ts';

/** The `WEBHOOK_SECRET` binding of the tests (the sandbox's merchant secret). */
export const WEBHOOK_SECRET = 'sandbox-secret';

/** A spec envelope (docs/payments-api.md, "Events") with a fresh `event_id`; `overrides` replace fields. */
export function envelope(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_type: 'charge_success',
    status: 'success',
    message: 'Payment completed',
    event_id: `evt_${crypto.randomUUID()}`,
    timestamp: '2030-01-01T00:00:00.000Z',
    data: { reference: 'pay_1', amount: 5000, currency: 'NGN', metadata: null },
    ...overrides,
  };
}

/** Options of {@link webhookRequest}. */
export interface WebhookInit {
  /** Signing secret; `null` sends no signature headers. @default WEBHOOK_SECRET */
  secret?: string | null;
  /** Unix seconds to sign with. @default now */
  timestamp?: number;
  /** Overrides the signed headers (sent after signing). */
  headers?: Record<string, string>;
  /** Body actually sent when it differs from the signed one (tampering). */
  sentBody?: string;
}

/** A webhook POST without a bearer token, signed over `body` like the provider does. */
export async function webhookRequest(body: string, init: WebhookInit = {}): Promise<Request> {
  const { secret = WEBHOOK_SECRET } = init;
  const signature =
    secret === null
      ? {}
      : await signRequest({
          keyId: 'sandbox-key',
          secret,
          body,
          ...(init.timestamp === undefined ? {} : { timestamp: init.timestamp }),
        });
  return gatewayRequest('/webhooks', {
    token: null,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...signature, ...init.headers },
    body: init.sentBody ?? body,
  });
}

/** How many `webhook_events` rows hold `eventId` (0 or 1). */
export async function rowCount(eventId: string): Promise<number> {
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_events WHERE event_id = ?1')
    .bind(eventId)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

/** The current unix time in seconds. */
export const unixNow = () => Math.floor(Date.now() / 1000);
