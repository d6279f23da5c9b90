// Webhooks (docs/payments-api.md, "Events"): the envelope, signed like requests, POSTed, logged; core.ts retries
// a failed delivery on the schedule of `POST /__sandbox/webhooks/retries`.
import { signRequest } from '../signing.ts';
import type { ResolvedSandboxOptions } from './options.ts';

/** Milliseconds a webhook receiver has to answer before the delivery counts as failed. */
const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Real milliseconds before each retry of a webhook its receiver did not take (2xx), after
 * each failed attempt: 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, so 8 attempts in all
 * over about 1 h 43 min, a provider's schedule compressed so a test or a restarted
 * gateway sees it.
 */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000,
];

/** Delivery state of a logged webhook. */
type WebhookDelivery = 'pending' | 'delivered' | 'failed' | 'no_target';

/** The spec's webhook envelope (docs/payments-api.md, "Events"). */
interface WebhookEnvelope {
  event_type: string;
  status: string;
  message: string;
  event_id: string;
  /** ISO 8601, sandbox time of the event. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** One webhook in the log served at `GET /__sandbox/webhooks`. */
export interface WebhookRecord {
  event_id: string;
  event_type: string;
  url: string | null;
  body: WebhookEnvelope;
  /** `pending` also while a retry is scheduled; `failed` once the schedule is spent. */
  delivery: WebhookDelivery;
  /** Delivery attempts made so far. */
  attempts: number;
  /** When the next retry is due (real time, ISO 8601), while one is scheduled. */
  next_attempt_at?: string;
  /** Status of the last attempt, when it got a response. */
  response_status?: number;
  /** Error of the last attempt, when it got none. */
  error?: string;
}

/** An event to emit: the envelope's fields besides event_id, and an explicit target. */
export interface WebhookEvent {
  /** e.g. `charge_success` (docs/payments-api.md, "Events"). */
  type: string;
  /** Envelope `status`, e.g. `success` or `failed`. */
  status: string;
  message: string;
  data: Record<string, unknown>;
  /** Sandbox time of the event, epoch ms. */
  at: number;
  /** The request's `webhook_url`; falls back to the `webhookUrl` option. */
  url?: string | undefined;
}

/**
 * Builds the log record (and envelope) of an event, delivery `pending`, or
 * `no_target` when there is no address to send it to.
 *
 * @param event - the event.
 * @param url - where it goes, if anywhere.
 */
export function webhookRecord(event: WebhookEvent, url: string | undefined): WebhookRecord {
  const eventId = `evt_${crypto.randomUUID()}`;
  return {
    event_id: eventId,
    event_type: event.type,
    url: url ?? null,
    body: {
      event_type: event.type,
      status: event.status,
      message: event.message,
      event_id: eventId,
      timestamp: new Date(event.at).toISOString(),
      data: event.data,
    },
    delivery: url === undefined ? 'no_target' : 'pending',
    attempts: 0,
  };
}

/**
 * Makes one delivery attempt: POSTs the webhook with the request-signing headers
 * (X-Key-Id, X-Timestamp in real unix seconds, X-Signature over the exact body), counts
 * the attempt and records its outcome on the record: `delivered` on a 2xx, `failed`
 * otherwise (3xx included, redirects are not followed) or on a network error or timeout,
 * with the last attempt's `response_status` or `error`. Never throws; the caller decides
 * on a retry.
 *
 * @param options - key id, secret, real clock and fetch.
 * @param record - a `pending` record with a url.
 */
export async function deliverWebhook(
  options: ResolvedSandboxOptions,
  record: WebhookRecord,
): Promise<void> {
  if (record.url === null) return;
  record.attempts += 1;
  delete record.next_attempt_at;
  try {
    const body = JSON.stringify(record.body);
    const signature = await signRequest({
      keyId: options.keyId,
      secret: options.secret,
      body,
      now: options.now,
    });
    const response = await options.fetch(record.url, {
      method: 'POST',
      headers: { ...signature, 'Content-Type': 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    record.response_status = response.status;
    delete record.error;
    record.delivery = response.status >= 200 && response.status < 300 ? 'delivered' : 'failed';
    await response.body?.cancel();
  } catch (error) {
    record.delivery = 'failed';
    delete record.response_status;
    record.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}
