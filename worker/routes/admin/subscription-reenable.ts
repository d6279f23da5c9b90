/**
 * What enabling a disabled subscription again does besides the flag: it counts the events
 * it missed while disabled (their fan-out made no delivery for it) and, with
 * `requeue_pending`, re-enqueues its waiting deliveries and starts a recovery job that
 * writes and enqueues the missed ones page by page (worker/relay/recover.ts).
 */
import type { IRequest } from 'itty-router';
import { toDeliveryTargets } from '../../db/deliveries.ts';
import { type EventShard, everyEventShard } from '../../db/event-shards.ts';
import { countMissedEvents, sumMissedEventCounts } from '../../db/missed-event-pages.ts';
import { subscriptionsViewsOf } from '../../db/recovery-shard-pages.ts';
import { requeueSubscriptionDeliveries } from '../../db/subscription-health.ts';
import { SUBSCRIPTIONS_TABLE } from '../../db/subscription-snapshot.ts';
import type { SubscriptionRecord } from '../../db/subscriptions.ts';
import { contextOf, settingsIn } from '../../http/context.ts';
import { logEvent } from '../../http/log.ts';
import { enqueueRequestedDeliveries } from '../../relay/operator-request.ts';
import { launchRecoveryJob } from '../../relay/recover.ts';
import { type RecoveryJobView, toRecoveryJobView } from './recover.ts';

/**
 * Most missed events counted in the answer of a re-enable: past it `capped` says "at least",
 * so the count reads a bounded number of rows.
 */
const MISSED_EVENTS_CAP = 10_000;

/** What a re-enable adds to the subscription's view. */
export interface ReenableAnswer {
  /** Deliveries re-enqueued; only with `requeue_pending`. */
  requeued?: number;
  /** Events received while it was disabled that it matches and never got. */
  missed_events?: { count: number; capped: boolean };
  /** The job delivering them (with `requeue_pending`), `null` when none was missed. */
  recovery_job?: RecoveryJobView | null;
}

/**
 * The re-enable's side effects: `before` was disabled and this request enabled it.
 * The missed events are those fanned out between its disable and now (now read after the
 * enable was written: an event fanned out later saw it enabled and made its own delivery),
 * counted on every event shard and summed.
 *
 * @param before - the subscription as it was, disabled.
 * @param requeuePending - whether the operator asked to deliver what waited.
 * @param operator - the operator's name, if known.
 * @returns the fields the answer adds.
 */
export async function reenableEffects(
  request: IRequest,
  env: Env,
  before: SubscriptionRecord,
  {
    requeuePending,
    operator,
  }: { readonly requeuePending: boolean; readonly operator: string | null },
): Promise<ReenableAnswer> {
  const now = Date.now();
  const since = before.health.disabledAt ?? before.createdAt;
  const shards = everyEventShard(env, settingsIn(contextOf(request)));
  const views = await subscriptionsViewsOf(env.DB, shards);
  const counts = await Promise.all(
    shards.map((shard, index) =>
      countMissedEvents(
        shard.db,
        before.id,
        since,
        now,
        MISSED_EVENTS_CAP,
        views[index] ?? SUBSCRIPTIONS_TABLE,
      ),
    ),
  );
  const missed = sumMissedEventCounts(counts, MISSED_EVENTS_CAP);
  const missedEvents = { count: missed.count, capped: missed.capped };
  if (!requeuePending) return { missed_events: missedEvents };
  const requeued = await requeueWaiting(request, env, before, { now, operator, shards });
  if (missed.count === 0) return { requeued, missed_events: missedEvents, recovery_job: null };
  const filter = { since, until: now, subscriptionId: before.id, status: null, eventType: null };
  const { job } = await launchRecoveryJob(env, 'missed_events', filter, operator);
  logEvent('info', 'subscription_missed_events_recovery', {
    request_id: contextOf(request).requestId,
    subscription_id: before.id,
    job_id: job.id,
    missed_events: missed.count,
  });
  return { requeued, missed_events: missedEvents, recovery_job: toRecoveryJobView(job) };
}

/**
 * Re-enqueues what waited for a subscription while it was disabled: its pending deliveries
 * and those failed since its run of failures began (an operator's disable of a healthy
 * subscription has none: since it was disabled). Their attempts are recorded as a recovery
 * the operator asked for. Every event shard is re-queued (in parallel), each delivery
 * enqueued with its shard.
 *
 * @param before - the subscription as it was, disabled.
 * @param at - the time (epoch ms), the operator, if known, and the event shards.
 * @returns how many deliveries were re-enqueued.
 */
async function requeueWaiting(
  request: IRequest,
  env: Env,
  before: SubscriptionRecord,
  at: {
    readonly now: number;
    readonly operator: string | null;
    readonly shards: readonly EventShard[];
  },
): Promise<number> {
  const since = before.health.failingSince ?? before.health.disabledAt ?? at.now;
  const perShard = await Promise.all(
    at.shards.map(async (shard) => {
      const ids = await requeueSubscriptionDeliveries(shard.db, before.id, since, at.now);
      const rows = ids.map((id) => ({ id, subscription_id: before.id }));
      return toDeliveryTargets(rows, shard.name);
    }),
  );
  const targets = perShard.flat();
  await enqueueRequestedDeliveries(env.DELIVERIES, targets, {
    trigger: 'recover',
    operator: at.operator,
    requestedAt: at.now,
  });
  logEvent('info', 'subscription_requeued', {
    request_id: contextOf(request).requestId,
    subscription_id: before.id,
    deliveries: targets.length,
  });
  return targets.length;
}
