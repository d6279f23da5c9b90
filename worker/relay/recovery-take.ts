/**
 * One page of a recovery job, taken: where the job's walk over the event shards is, and the
 * take itself on `DB` (its writes and the job's move in one transaction) or on another shard
 * (under the page's own row there, then the job moved in `DB` with what that row recorded:
 * worker/db/recovery-shard-pages.ts). The deliveries a page reset or wrote are enqueued with
 * trigger `recover`, each naming its shard.
 */
import { settingsOf } from '../config.ts';
import { type DeliveryTarget, toDeliveryTargets } from '../db/deliveries.ts';
import { type EventShard, everyEventShard, MAIN_SHARD } from '../db/event-shards.ts';
import { insertMissedDeliveriesStatement, takeMissedEventsPage } from '../db/missed-event-pages.ts';
import type { RecoveryJob } from '../db/recovery-jobs.ts';
import {
  type RecoveryCandidate,
  type RecoveryStep,
  resetPageStatement,
  takeRecoveryPage,
} from '../db/recovery-pages.ts';
import {
  advanceRecoveryJobStatement,
  outcomeOf,
  PAGE_GUARD,
  takePageOnShard,
} from '../db/recovery-shard-pages.ts';
import type { SubscriptionsView } from '../db/subscription-snapshot.ts';
import { enqueueRequestedDeliveries } from './operator-request.ts';

/** The reset deliveries with their subscriptions, read with the page (reset ids are among them). */
function withSubscriptions(
  ids: readonly string[] | null,
  candidates: readonly RecoveryCandidate[],
): DeliveryTarget[] | null {
  if (ids === null) return null;
  const subscriptionOf = new Map(candidates.map((c) => [c.id, c.subscriptionId]));
  return ids.flatMap((deliveryId) => {
    const subscriptionId = subscriptionOf.get(deliveryId);
    return subscriptionId === undefined ? [] : [{ deliveryId, subscriptionId }];
  });
}

/**
 * Where the job's walk is: the shard its cursor is in, and the one after it. Shards are
 * walked in the order the generations list them, oldest generation first, so a shard that a
 * generation added while the job ran comes after those already walked.
 *
 * @param env - bindings (the event shards) and settings (`D1_SHARDS`).
 * @param job - the job (its cursor's shard; absent: the first).
 * @returns the shard to read and the name of the one after it, if any.
 * @throws {Error} when the cursor's shard is no longer in `D1_SHARDS`;
 *   {@link settingsOf}'s 503 when the settings are invalid.
 */
export function walkOf(env: Env, job: RecoveryJob): { shard: EventShard; next?: string } {
  const shards = everyEventShard(env, settingsOf(env));
  const at = job.shard === undefined ? 0 : shards.findIndex((s) => s.name === job.shard);
  const shard = shards[at];
  if (shard === undefined) throw new Error(`shard ${job.shard} is no longer in D1_SHARDS`);
  const next = shards[at + 1]?.name;
  return next === undefined ? { shard } : { shard, next };
}

/**
 * What a step took: how many deliveries it enqueued, whether it moved the job, and whether
 * the page taken was the walk's last (as recorded: on a shard, a run that did not take the
 * page may have read another number of rows than the one that did).
 */
export interface TakenStep {
  readonly enqueued: number;
  readonly moved: boolean;
  readonly done: boolean;
}

/** Enqueues a page's reset or written deliveries with trigger `recover` and the job's operator. */
async function enqueueRecovered(
  env: Env,
  job: RecoveryJob,
  deliveries: readonly DeliveryTarget[],
  now: number,
): Promise<void> {
  await enqueueRequestedDeliveries(env.DELIVERIES, deliveries, {
    trigger: 'recover',
    operator: job.operator,
    requestedAt: now,
  });
}

/**
 * Takes a step's page where the walk is, and enqueues what it reset or wrote.
 *
 * @param env - bindings (`DB`, the event shards, `DELIVERIES`).
 * @param job - the job, as read for this step.
 * @param on - the shard the page was read from and how it reads the subscriptions.
 * @param step - the page number, what was read, whether it is the shard's last, the next shard.
 * @param now - the reset and update time, epoch ms.
 * @throws whatever D1 or the queue throws.
 */
export async function takeRecoveryStep(
  env: Env,
  job: RecoveryJob,
  on: { readonly shard: EventShard; readonly view: SubscriptionsView },
  step: RecoveryStep,
  now: number,
): Promise<TakenStep> {
  return on.shard.name === MAIN_SHARD
    ? takeOnMain(env, job, step, now)
    : takeOnShard(env, job, on, step, now);
}

/** Takes the page on `DB`: its writes and the job's move are one transaction. */
async function takeOnMain(
  env: Env,
  job: RecoveryJob,
  step: RecoveryStep,
  now: number,
): Promise<TakenStep> {
  const reset =
    job.kind === 'missed_events'
      ? await takeMissedEventsPage(env.DB, job, step, now)
      : withSubscriptions(await takeRecoveryPage(env.DB, job, step, now), step.candidates);
  const done = step.last && step.next === undefined;
  if (reset === null) return { enqueued: 0, moved: false, done };
  await enqueueRecovered(env, job, reset, now);
  return { enqueued: reset.length, moved: true, done };
}

/**
 * Takes the page on another shard (guarded by the page's row there), enqueues what this run
 * reset or wrote (only the run that took the page has any), then moves the job in `DB` with
 * what the page's row recorded: a step run again after the first run took the page but
 * failed before moving the job moves it with the same counts and enqueues nothing again.
 */
async function takeOnShard(
  env: Env,
  job: RecoveryJob,
  on: { readonly shard: EventShard; readonly view: SubscriptionsView },
  step: RecoveryStep,
  now: number,
): Promise<TakenStep> {
  const wanted = step.candidates.filter((candidate) => candidate.enabled).map((c) => c.id);
  const page = { page: step.page, wanted, now };
  const write =
    job.kind === 'missed_events'
      ? insertMissedDeliveriesStatement(on.shard.db, job, page, PAGE_GUARD, on.view)
      : resetPageStatement(on.shard.db, job, page, PAGE_GUARD, on.view);
  const outcome = outcomeOf(step, step.candidates.length - wanted.length);
  const taken = await takePageOnShard(on.shard.db, job.id, outcome, write, now);
  const written = toDeliveryTargets(taken.written, on.shard.name);
  await enqueueRecovered(env, job, written, now);
  const moved = await advanceRecoveryJobStatement(
    env.DB,
    job.id,
    taken.outcome,
    Date.now(),
    taken.enqueued,
  ).all();
  const done = taken.outcome.last && taken.outcome.next === undefined;
  return { enqueued: written.length, moved: moved.results.length > 0, done };
}
