// The admin API's answers as the console reads them (docs/gateway.md, "Admin API"). Times
// are ISO 8601 UTC strings.

/** A webhook event's confirmation against the payment service. */
export type EventStatus = 'received' | 'awaiting_confirmation' | 'confirmed' | 'unconfirmed';

/** Where a money event's checks against the payment service stand. */
export interface Confirmation {
  /** The last check's finding in words (`status processing`, `record not found`, ...). */
  reason: string | null;
  /** Checks made so far. */
  checks: number;
  checked_at: string | null;
  /** When the next check is due; `null` unless awaiting confirmation. */
  next_check_at: string | null;
}

/** A delivery's state: sent and acknowledged, waiting for an attempt, or given up on. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * Whether an event reached its subscribers: a delivery failed for good, one is pending after
 * a failed attempt, one is not attempted yet, it is held for confirmation (not fanned out),
 * every delivery delivered, or no subscription matched.
 */
export type EventOutcome =
  | 'failed'
  | 'failing'
  | 'pending'
  | 'held'
  | 'delivered'
  | 'no_subscriber';

/** One event of `GET /admin/events`. */
export interface EventSummary {
  event_id: string;
  event_type: string;
  status: EventStatus;
  outcome: EventOutcome;
  received_at: string;
  /** `data.reference` of the event, when it has one. */
  reference?: string | null;
  /** A money event's amount in major units (`5000.5`); `null` for other events. */
  amount: number | null;
  /** Its currency code (`NGN`); `null` when the event carries none. */
  currency: string | null;
}

/** One delivery of an event to one subscription. */
export interface Delivery {
  id: string;
  event_id: string;
  subscription_id: string;
  status: DeliveryStatus;
  /** Attempts recorded so far. */
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  created_at: string;
  updated_at: string;
}

/** One delivery of `GET /admin/deliveries`, with its event's type. */
export interface DeliveryListItem extends Delivery {
  event_type: string;
}

/** One attempt to deliver: when, the subscriber's HTTP status, how long, what went wrong. */
export interface Attempt {
  attempt: number;
  started_at: string;
  /** `null` when no answer came (timeout, refused connection, address refused). */
  status: number | null;
  latency_ms: number;
  error: string | null;
  /** The first bytes of the subscriber's answer. */
  response_excerpt: string | null;
  /** What started it: the relay's schedule, or an operator's retry, replay or recovery. */
  trigger: 'schedule' | 'retry' | 'replay' | 'recover';
  /** The operator's name, when one was given. */
  operator: string | null;
}

/** Who forced the replay of an unconfirmed event, from where and when. */
interface ForcedReplay {
  at: string;
  by: string;
  from: string;
}

/** `GET /admin/events/:id`: the event, its exact body and its deliveries with their attempts. */
export interface EventDetail extends EventSummary {
  body: unknown;
  raw_body: string;
  /** `null` when the event was never checked (not a money event, or confirmation is off). */
  confirmation: Confirmation | null;
  /** The latest of `forced_replays`, or `null`. */
  forced_replay: ForcedReplay | null;
  /** Every forced replay, oldest first (an append-only history). */
  forced_replays: ForcedReplay[];
  deliveries: Array<Delivery & { attempt_log: Attempt[] }>;
}

/** A webhook subscription; the secret is in the answers of create and rotate only. */
export interface Subscription {
  id: string;
  url: string;
  /** `null` = every event type. */
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  /** Most attempts a second (`0.5`: one every 2 s); `null` = no limit. */
  max_per_second: number | null;
  /** Most attempts at the same time; `null` = the relay's default (10). */
  max_in_flight: number | null;
  /** The events of one reference are delivered in the provider's order. */
  ordered: boolean;
  health: SubscriptionHealth;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
  /** Deliveries re-enqueued by a re-enable with `requeue_pending`. */
  requeued?: number;
  /** On a re-enable: the events that arrived while it was disabled, counted up to a cap. */
  missed_events?: { count: number; capped: boolean };
}

/** A subscriber's health: its state, why and when it last changed, its last day's attempts. */
export interface SubscriptionHealth {
  state: 'healthy' | 'failing' | 'disabled';
  /** `null` for a subscription that never changed since created. */
  reason: string | null;
  changed_at: string;
  failing_since: string | null;
  disabled_at: string | null;
  success_rate: {
    window_hours: number;
    attempts: number;
    succeeded: number;
    failed: number;
    /** Share of attempts that got a 2xx, 0 to 1; `null` without attempts. */
    rate: number | null;
  };
}

/** The fields of a subscription the console creates or changes. */
export interface SubscriptionInput {
  url: string;
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  max_per_second: number | null;
  max_in_flight: number | null;
  ordered: boolean;
  /** Accept `event_types` the catalog does not list (the operator ticked "custom type"). */
  allow_custom_event_types?: boolean;
}

/** `PATCH /admin/subscriptions/:id`'s re-enable: `enabled: true`, re-queueing on request. */
export interface ReEnableRequest {
  enabled: true;
  requeue_pending: boolean;
}

/** `POST /admin/subscriptions/:id/test`: the test event and its one delivery. */
export interface TestEventSent {
  event_id: string;
  delivery_id: string;
}

/** `GET /admin/deliveries/counts`. */
export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
  total: number;
}

/** One hour of `GET /admin/deliveries/hourly`: deliveries created in it, by current status. */
export interface HourCounts {
  hour: string;
  delivered: number;
  pending: number;
  failed: number;
}

/** A page of a keyset-paginated list; `next_cursor` is `null` on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** `POST /admin/events/:id/replay`'s body. */
export interface ReplayRequest {
  subscription_id?: string;
  force?: boolean;
  operator?: string;
}

/** A bulk recovery's filter, as `POST /admin/deliveries/recover` and its preview take it. */
export interface RecoveryRequest {
  /** ISO 8601; deliveries created at or after it. */
  since: string;
  /** ISO 8601; deliveries created before it. */
  until?: string;
  subscription_id?: string;
  /** Absent: both. */
  status?: 'failed' | 'pending';
  event_type?: string;
  /** Who is recovering, recorded on the job and on the attempts it starts. */
  operator?: string;
}

/** `POST /admin/deliveries/recover/preview`: how many match now (counted up to a cap). */
export interface RecoveryPreview {
  matched: number;
  /** Of those, the deliveries a job would skip: their subscription is disabled or deleted. */
  skipped_disabled: number;
  /** More match than were counted: `matched` is a lower bound. */
  capped: boolean;
}

/** A bulk recovery job and its progress (`GET /admin/deliveries/recover/jobs/:id`). */
export interface RecoveryJob {
  id: string;
  /**
   * `deliveries`: a bulk recovery by filter; `missed_events`: the events a subscription
   * re-enabled with `requeue_pending` missed while it was disabled.
   */
  kind: 'deliveries' | 'missed_events';
  state: 'running' | 'done' | 'failed';
  filter: {
    since: string;
    until: string | null;
    subscription_id: string | null;
    status: 'failed' | 'pending' | null;
    event_type: string | null;
  };
  operator: string | null;
  matched: number;
  enqueued: number;
  skipped_disabled: number;
  pages: number;
  /** Why a `failed` job stopped. */
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** One entry of `GET /admin/event-types` (its `data_schema` is not read by the console). */
export interface EventTypeInfo {
  type: string;
  origin: 'spec' | 'sandbox' | 'relay';
  description: string;
}
