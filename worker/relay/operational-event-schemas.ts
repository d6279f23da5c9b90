/**
 * The relay's own (operational) event types and the valibot schema of each one's `data`.
 * They are delivered in the same envelope as the provider's events; the event-type catalog
 * (worker/relay/event-catalog.ts) publishes these schemas as JSON Schema.
 */
import * as v from 'valibot';

/** An ISO 8601 UTC time, as `Date.prototype.toISOString` writes it. */
const Instant = v.pipe(v.string(), v.isoTimestamp('Expected an ISO 8601 time'));

/**
 * `subscription.disabled`: a subscription stopped receiving deliveries (its subscriber
 * answered 410, or every attempt failed for too long).
 */
const SubscriptionDisabledDataSchema = v.object({
  subscription_id: v.string(),
  /**
   * The host of its URL (with a port other than the scheme's), never its path or query: this
   * event goes to other subscribers, and a URL's path or query may hold a capability token.
   */
  host: v.string(),
  /** Why, in words (`answered 410 Gone`). */
  reason: v.string(),
  disabled_at: Instant,
});

/** `delivery.dead_lettered`: a delivery ran out of attempts and is `failed` for good. */
const DeliveryDeadLetteredDataSchema = v.object({
  delivery_id: v.string(),
  event_id: v.string(),
  event_type: v.string(),
  subscription_id: v.string(),
  /** Attempts recorded for the delivery. */
  attempts: v.pipe(v.number(), v.integer()),
  /** HTTP status of its last attempt; `null` when none came back. */
  last_status: v.nullable(v.pipe(v.number(), v.integer())),
  dead_lettered_at: Instant,
});

/**
 * `event.unconfirmed`: a money event the payment service contradicted, or could not confirm
 * before its check schedule ran out. It is stored and not delivered (a replay needs `force`).
 */
const EventUnconfirmedDataSchema = v.object({
  event_id: v.string(),
  event_type: v.string(),
  /** The event's `data.reference`, when it has one. */
  reference: v.nullable(v.string()),
  /** The last check's finding, in words. */
  reason: v.string(),
  /** Checks made. */
  checks: v.pipe(v.number(), v.integer()),
  unconfirmed_at: Instant,
});

/** `relay.backlog`: the oldest pending delivery has waited longer than the alert threshold. */
const RelayBacklogDataSchema = v.object({
  oldest_delivery_id: v.string(),
  oldest_event_id: v.string(),
  oldest_subscription_id: v.string(),
  /** When the oldest delivery became due (its creation when never attempted). */
  oldest_due_at: Instant,
  /** How long it has waited, in seconds. */
  age_seconds: v.pipe(v.number(), v.integer()),
  /** `RELAY_BACKLOG_ALERT_SEC`, in seconds. */
  threshold_seconds: v.pipe(v.number(), v.integer()),
  /** Pending deliveries due at the time of the check. */
  due_deliveries: v.pipe(v.number(), v.integer()),
});

/**
 * `subscription.test`: a test an operator sent to one subscription (`POST
 * /admin/subscriptions/{id}/test`), to see its receiver take a signed delivery.
 */
const SubscriptionTestDataSchema = v.object({
  subscription_id: v.string(),
  /** The host of its URL, as `subscription.disabled` names a subscription. */
  host: v.string(),
  /** Who sent it, when a name was given. */
  operator: v.nullable(v.string()),
  sent_at: Instant,
});

/** The `data` schema of each operational event type. */
export const OPERATIONAL_DATA_SCHEMAS = Object.freeze({
  'subscription.disabled': SubscriptionDisabledDataSchema,
  'delivery.dead_lettered': DeliveryDeadLetteredDataSchema,
  'event.unconfirmed': EventUnconfirmedDataSchema,
  'relay.backlog': RelayBacklogDataSchema,
  'subscription.test': SubscriptionTestDataSchema,
});

/** One of the relay's own event types. */
export type OperationalEventType = keyof typeof OPERATIONAL_DATA_SCHEMAS;

/** The `data` of an operational event of type `T`. */
export type OperationalEventData<T extends OperationalEventType> = v.InferInput<
  (typeof OPERATIONAL_DATA_SCHEMAS)[T]
>;

/**
 * Where a provider's event would take a name the relay keeps for its own events: an
 * operational `event_type`, or an `event_id` in the form the relay gives its own
 * (`<type>:...`). Such an event is refused at the ingress: stored first, it would shadow the
 * relay's alert of that type, or, under the alert's id, stop the alert from being stored.
 *
 * @param event - the envelope's `event_type` and `event_id`.
 * @returns one issue per field that takes a reserved name (`path`, `message`), none when free.
 */
export function reservedNameIssues(event: {
  readonly event_type: string;
  readonly event_id: string;
}): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const types = Object.keys(OPERATIONAL_DATA_SCHEMAS);
  if (types.includes(event.event_type)) {
    issues.push({
      path: 'event_type',
      message: `"${event.event_type}" is kept for the relay's own events`,
    });
  }
  const prefix = types.find((type) => event.event_id.startsWith(`${type}:`));
  if (prefix !== undefined) {
    issues.push({
      path: 'event_id',
      message: `Ids starting "${prefix}:" are kept for the relay's own events`,
    });
  }
  return issues;
}

/**
 * How the relay's own events name a subscriber: the host of its URL (a port other than the
 * scheme's included), never the path or query, which may hold a capability token.
 *
 * @param url - the subscription's URL, as stored (checked when it was written).
 * @returns the host, or the empty string should the stored URL not parse.
 */
export function subscriberHost(url: string): string {
  return URL.canParse(url) ? new URL(url).host : '';
}
