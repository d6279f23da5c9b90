/**
 * The first step of a delivery attempt: load the delivery, its event and subscription,
 * check the subscription URL and its host, and sign the request. Nothing is written here:
 * what was decided goes to the settle step, which records it.
 */
import { loadSettings } from '../config.ts';
import { findDelivery } from '../db/deliveries.ts';
import type { EventShard } from '../db/event-shards.ts';
import type { SubscriptionRecord } from '../db/subscriptions.ts';
import { findWebhookEvent } from '../db/webhook-events.ts';
import type { SubscriptionCopy } from './outbox-subscription.ts';
import { standardWebhookHeaders } from './standard-webhooks.ts';
import { checkSubscriberHost } from './subscriber-dns.ts';
import { checkSubscriptionUrl } from './subscription-url.ts';

/** No attempt is due: the delivery is settled, gone, or the gateway cannot send now. */
export interface SkippedDelivery {
  readonly kind: 'skipped';
  /** Logged as `reason` (`not_found`, `delivered`, `configuration_error`, ...). */
  readonly reason: string;
  /** Settle the delivery as `failed` first, so the sweeper never re-enqueues it. */
  readonly markFailed: boolean;
}

/** An attempt that sends no request: the URL or its host was refused, or cannot be signed. */
export interface RefusedDelivery {
  readonly kind: 'refused';
  /** When the checks started, epoch milliseconds. */
  readonly startedAt: number;
  readonly error: string;
  /** Retry on the schedule (a failed DNS lookup), or fail the delivery for good (a refusal). */
  readonly retry: boolean;
}

/** A signed request, ready to be sent. */
export interface ReadyDelivery {
  readonly kind: 'ready';
  readonly eventId: string;
  readonly subscriptionId: string;
  /** The subscription URL, as checked. */
  readonly url: string;
  /** The Standard Webhooks headers. */
  readonly headers: Headers;
  /** The event's original body. */
  readonly body: string;
  /**
   * The host name checked and the addresses accepted for it, asked again once the request
   * is done; `null` when no name was looked up (an IP address, or localhost in local mode).
   */
  readonly checkedHost: CheckedHost | null;
}

/** A subscriber host name and what its DNS check accepted. */
interface CheckedHost {
  readonly hostName: string;
  readonly addresses: readonly string[];
  /** The resolver and loopback rule the check used, for asking again. */
  readonly resolver: string;
  readonly allowLoopback: boolean;
}

/** What {@link prepareDelivery} decided. */
export type PreparedDelivery = SkippedDelivery | RefusedDelivery | ReadyDelivery;

/**
 * Loads a delivery and everything its attempt needs, then checks and signs it. Only a
 * `pending` delivery of a stored event to an enabled subscription gets an attempt.
 *
 * @param deliveryId - `dlv_<uuid>`, from the message.
 * @param shard - the event shard storing it (the message's `shard`).
 * @param env - bindings (`DB`) and settings (`ALLOW_LOCAL_SUBSCRIBERS`, `SUBSCRIBER_PORTS`,
 *   `SUBSCRIBER_DNS_RESOLVER`).
 * @param send - the fetch for the DNS-over-HTTPS lookup of the subscriber's host.
 * @param subscriptions - the outbox's copy of its subscription (no `DB` query while fresh).
 * @returns the decision: skip, refuse (recorded as an attempt), or the signed request.
 * @throws whatever D1 throws.
 */
export async function prepareDelivery(
  deliveryId: string,
  shard: EventShard,
  env: Env,
  send: typeof fetch,
  subscriptions: SubscriptionCopy,
): Promise<PreparedDelivery> {
  const loaded = loadSettings(env);
  if (!loaded.ok) {
    // Without valid settings nothing may be sent; the delivery stays `pending` and the
    // sweeper re-enqueues it once the configuration is fixed. Retrying the message instead
    // would spend its attempts and dead-letter it during a long misconfiguration.
    return { kind: 'skipped', reason: 'configuration_error', markFailed: false };
  }
  const delivery = await findDelivery(shard.db, deliveryId);
  if (delivery === undefined || delivery.status !== 'pending') {
    const reason = delivery === undefined ? 'not_found' : delivery.status;
    return { kind: 'skipped', reason, markFailed: false };
  }
  const [event, subscription] = await Promise.all([
    findWebhookEvent(shard.db, delivery.eventId),
    subscriptions.find(env, delivery.subscriptionId),
  ]);
  if (event === undefined || subscription === undefined || !subscription.enabled) {
    // Settled as failed so the sweeper never re-enqueues it; an admin retry may revive it.
    const reason = event === undefined ? 'event_gone' : 'subscription_gone_or_disabled';
    return { kind: 'skipped', reason, markFailed: true };
  }
  const settings = loaded.settings.subscribers;
  const urlCheck = checkSubscriptionUrl(subscription.url, settings);
  if (!urlCheck.ok) {
    return {
      kind: 'refused',
      startedAt: Date.now(),
      error: `URL refused: ${urlCheck.message}`,
      retry: false,
    };
  }
  let checkedHost: CheckedHost | null = null;
  if (urlCheck.hostName !== null) {
    const startedAt = Date.now();
    const rule = { resolver: settings.dnsResolver, allowLoopback: settings.allowLocal };
    const hostCheck = await checkSubscriberHost(urlCheck.hostName, { ...rule, fetch: send });
    if (!hostCheck.ok) {
      return { kind: 'refused', startedAt, error: hostCheck.error, retry: hostCheck.retry };
    }
    checkedHost = { hostName: urlCheck.hostName, addresses: hostCheck.addresses, ...rule };
  }
  const now = Date.now();
  try {
    const headers = await standardWebhookHeaders({
      id: event.eventId,
      timestamp: Math.floor(now / 1000),
      body: event.rawBody,
      secrets: signingSecrets(subscription, now),
    });
    return {
      kind: 'ready',
      eventId: event.eventId,
      subscriptionId: subscription.id,
      url: urlCheck.url,
      headers,
      body: event.rawBody,
      checkedHost,
    };
  } catch {
    // An event id no header can carry (stored before the ingress refused such ids):
    // no attempt could ever be sent, so it fails once, recorded, instead of every retry.
    return {
      kind: 'refused',
      startedAt: now,
      error: 'The event id cannot be sent as the webhook-id header',
      retry: false,
    };
  }
}

/** The current secret, then every replaced one whose rotation grace period still lasts. */
function signingSecrets(subscription: SubscriptionRecord, now: number): string[] {
  const inGrace = subscription.previousSecrets.filter((replaced) => replaced.expiresAt > now);
  return [subscription.secret, ...inGrace.map((replaced) => replaced.secret)];
}
