// The success bodies of the admin API, as valibot schemas the OpenAPI document converts like
// every other: what worker/routes/admin/ answers (its views, under `{ status, data }`). The
// delivery views are checked against the handlers' own types below; the live OpenAPI test
// (test/e2e/openapi-live.test.ts) holds every answer to these schemas.
import * as v from 'valibot';
import { DELIVERY_STATUSES } from '../db/deliveries.ts';
import { ATTEMPT_TRIGGERS } from '../db/delivery-attempts.ts';
import { RECOVERABLE_STATUSES, RECOVERY_JOB_STATES } from '../db/recovery-jobs.ts';
import { EVENT_OUTCOMES, WEBHOOK_EVENT_STATUSES } from '../db/webhook-events.ts';
import { EVENT_TYPE_ORIGINS } from '../relay/event-catalog.ts';
import { HEALTH_STATES } from '../relay/subscriber-health.ts';
import type { DeliveryView, toDeliveryAttemptView } from '../routes/admin/deliveries.ts';
import type { RecoveryJobView } from '../routes/admin/recover.ts';
import type { SubscriptionView } from '../routes/admin/subscription-view.ts';

/** An instant as the admin API writes it: ISO 8601 in UTC (`Date.prototype.toISOString`). */
const Time = v.pipe(v.string(), v.isoTimestamp());
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** `{ status: 'success', data }`, the admin API's success envelope. */
function success<const Data extends v.GenericSchema>(data: Data) {
  return v.object({ status: v.literal('success'), data });
}

/** A page of a keyset list: `next_cursor` is `null` on the last page. */
function page<const Item extends v.GenericSchema>(item: Item) {
  return v.object({
    status: v.literal('success'),
    data: v.array(item),
    next_cursor: v.nullable(v.string()),
  });
}

/** A subscriber's health: its state, when and why it last changed, its recent success rate. */
const SubscriptionHealthSchema = v.object({
  state: v.picklist(HEALTH_STATES),
  reason: v.nullable(v.string()),
  changed_at: Time,
  failing_since: v.nullable(Time),
  disabled_at: v.nullable(Time),
  success_rate: v.object({
    window_hours: Count,
    attempts: Count,
    succeeded: Count,
    failed: Count,
    rate: v.pipe(
      v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
      v.description('Share of the attempts that got a 2xx; null without attempts.'),
    ),
  }),
});

/** A subscription as the admin API shows it: never its secret. */
const SubscriptionSchema = v.object({
  id: v.string(),
  url: v.string(),
  event_types: v.nullable(v.array(v.string())),
  description: v.nullable(v.string()),
  enabled: v.boolean(),
  max_per_second: v.nullable(v.number()),
  max_in_flight: v.nullable(v.pipe(v.number(), v.integer())),
  ordered: v.boolean(),
  health: SubscriptionHealthSchema,
  previous_secret_expires_at: v.nullable(Time),
  created_at: Time,
  updated_at: Time,
});

/** A subscription with its secret: on creation and rotation only. */
const SubscriptionWithSecretSchema = v.object({
  ...SubscriptionSchema.entries,
  secret: v.string(),
});

const DeliverySchema = v.object({
  id: v.string(),
  event_id: v.string(),
  subscription_id: v.string(),
  status: v.picklist(DELIVERY_STATUSES),
  attempts: Count,
  next_attempt_at: v.nullable(Time),
  last_status: v.nullable(v.pipe(v.number(), v.integer())),
  created_at: Time,
  updated_at: Time,
});

const DeliveryAttemptSchema = v.object({
  attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
  started_at: Time,
  status: v.nullable(v.pipe(v.number(), v.integer())),
  latency_ms: Count,
  error: v.nullable(v.string()),
  response_excerpt: v.nullable(v.string()),
  trigger: v.picklist(ATTEMPT_TRIGGERS),
  operator: v.nullable(v.string()),
});

const EventSummarySchema = v.object({
  event_id: v.string(),
  event_type: v.string(),
  status: v.picklist(WEBHOOK_EVENT_STATUSES),
  outcome: v.picklist(EVENT_OUTCOMES),
  received_at: Time,
  reference: v.nullable(v.string()),
  amount: v.pipe(
    v.nullable(v.number()),
    v.description(
      'Major units with at most two fraction digits (5000.5), as the SDK parses the body; ' +
        '`null` for events without an amount.',
    ),
  ),
  currency: v.nullable(v.string()),
});

const ForcedReplaySchema = v.object({ at: Time, by: v.string(), from: v.string() });

const EventSchema = v.object({
  ...EventSummarySchema.entries,
  body: v.unknown(),
  raw_body: v.string(),
  confirmation: v.nullable(
    v.object({
      reason: v.string(),
      checks: Count,
      checked_at: v.nullable(Time),
      next_check_at: v.nullable(Time),
    }),
  ),
  forced_replay: v.nullable(ForcedReplaySchema),
  forced_replays: v.array(ForcedReplaySchema),
  deliveries: v.array(
    v.object({ ...DeliverySchema.entries, attempt_log: v.array(DeliveryAttemptSchema) }),
  ),
});

/** One type of the event-type catalog (worker/relay/event-catalog.ts). */
const EventTypeSchema = v.object({
  type: v.string(),
  origin: v.picklist(EVENT_TYPE_ORIGINS),
  description: v.string(),
  data_schema: v.pipe(
    v.looseObject({}),
    v.description('The JSON Schema (2020-12) of the event’s `data`.'),
  ),
});

/** A bulk recovery job and its progress (worker/routes/admin/recover.ts). */
const RecoveryJobSchema = v.object({
  id: v.string(),
  kind: v.pipe(
    v.picklist(['deliveries', 'missed_events']),
    v.description(
      '`deliveries`: a bulk recovery; `missed_events`: the events a subscription enabled again with `requeue_pending` missed while disabled.',
    ),
  ),
  state: v.picklist(RECOVERY_JOB_STATES),
  filter: v.object({
    since: Time,
    until: v.nullable(Time),
    subscription_id: v.nullable(v.string()),
    status: v.nullable(v.picklist(RECOVERABLE_STATUSES)),
    event_type: v.nullable(v.string()),
  }),
  operator: v.nullable(v.string()),
  matched: Count,
  enqueued: Count,
  skipped_disabled: Count,
  pages: Count,
  error: v.nullable(v.string()),
  started_at: Time,
  updated_at: Time,
  finished_at: v.nullable(Time),
});

const DeliveryCountsSchema = v.object({
  ...Object.fromEntries(DELIVERY_STATUSES.map((status) => [status, Count])),
  total: Count,
});

/**
 * The success body of each admin route, by route name (the 204 of a deletion has none).
 * A route of the admin API missing here fails the document build.
 */
export const ADMIN_ANSWERS: Readonly<Record<string, v.GenericSchema>> = Object.freeze({
  'admin.subscriptions.create': success(SubscriptionWithSecretSchema),
  'admin.subscriptions.list': success(v.array(SubscriptionSchema)),
  'admin.subscriptions.get': success(SubscriptionSchema),
  'admin.subscriptions.update': success(
    v.object({
      ...SubscriptionSchema.entries,
      requeued: v.pipe(
        v.optional(Count),
        v.description('Deliveries re-enqueued; only when `requeue_pending` was asked.'),
      ),
      missed_events: v.pipe(
        v.optional(v.object({ count: Count, capped: v.boolean() })),
        v.description(
          'Only when this request enabled it again: events received while it was disabled that it matches and never got (at most 10,000; `capped` when more).',
        ),
      ),
      recovery_job: v.pipe(
        v.optional(v.nullable(RecoveryJobSchema)),
        v.description(
          'Only with `requeue_pending` on a re-enable: the job delivering the missed events (`null` when none were missed).',
        ),
      ),
    }),
  ),
  'admin.subscriptions.rotate_secret': success(SubscriptionWithSecretSchema),
  'admin.subscriptions.test': success(
    v.object({
      event_id: v.pipe(v.string(), v.description('The `subscription.test` event stored.')),
      delivery_id: v.pipe(v.string(), v.description('Its one delivery, to this subscription.')),
    }),
  ),
  'admin.event_types.list': success(v.array(EventTypeSchema)),
  'admin.events.list': page(EventSummarySchema),
  'admin.events.get': success(EventSchema),
  'admin.events.replay': success(
    v.object({
      event_id: v.string(),
      delivery_ids: v.array(v.string()),
      skipped_subscriptions: v.pipe(
        v.array(v.object({ subscription_id: v.string(), reason: v.string() })),
        v.description('Disabled subscriptions the event matched, not replayed to, and why.'),
      ),
    }),
  ),
  'admin.deliveries.list': page(v.object({ ...DeliverySchema.entries, event_type: v.string() })),
  'admin.deliveries.counts': success(DeliveryCountsSchema),
  'admin.deliveries.hourly': success(
    v.object({
      hours: v.array(
        v.object({ hour: Time, ...Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, Count])) }),
      ),
    }),
  ),
  'admin.deliveries.retry': success(DeliverySchema),
  'admin.deliveries.recover': success(RecoveryJobSchema),
  'admin.deliveries.recover_preview': success(
    v.object({ matched: Count, skipped_disabled: Count, capped: v.boolean() }),
  ),
  'admin.deliveries.recover_get': success(RecoveryJobSchema),
  'admin.deliveries.recover_list': success(v.array(RecoveryJobSchema)),
});

// The handlers' own view types and these schemas must agree (a compile error otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agrees = <T extends true>(value: T) => value;
agrees<Same<v.InferOutput<typeof DeliverySchema>, DeliveryView>>(true);
agrees<Same<v.InferOutput<typeof RecoveryJobSchema>, RecoveryJobView>>(true);
agrees<Same<v.InferOutput<typeof SubscriptionSchema>, SubscriptionView>>(true);
agrees<Same<v.InferOutput<typeof DeliveryAttemptSchema>, ReturnType<typeof toDeliveryAttemptView>>>(
  true,
);
