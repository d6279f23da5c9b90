/**
 * The admin API's bulk recovery (`/admin/deliveries/recover`): start a job that re-enqueues
 * every undelivered delivery matching a filter, preview how many match, and read a job's
 * progress. The job runs page by page on the DELIVERIES queue (worker/relay/recover.ts).
 * The admin guard has already checked `ADMIN_TOKEN`.
 */
import type { IRequest } from 'itty-router';
import * as v from 'valibot';
import { everyEventShard } from '../../db/event-shards.ts';
import {
  findRecoveryJob,
  listRecoveryJobs,
  RECOVERABLE_STATUSES,
  type RecoveryFilter,
  type RecoveryJob,
} from '../../db/recovery-jobs.ts';
import { countRecoverable, sumRecoveryCounts } from '../../db/recovery-pages.ts';
import { subscriptionsViewsOf } from '../../db/recovery-shard-pages.ts';
import { SUBSCRIPTIONS_TABLE } from '../../db/subscription-snapshot.ts';
import { contextOf, settingsIn } from '../../http/context.ts';
import { HttpError } from '../../http/errors.ts';
import { logEvent } from '../../http/log.ts';
import { jsonResponse } from '../../http/respond.ts';
import { MAX_EVENT_KEY_LENGTH } from '../../relay/envelope.ts';
import { launchRecoveryJob } from '../../relay/recover.ts';
import { OperatorNameSchema, operatorOf } from './operator.ts';

/** Path of recovery jobs; one job is `${path}/jobs/:id`, the preview `${path}/preview`. */
export const ADMIN_RECOVER_PATH = '/admin/deliveries/recover';

/**
 * Most deliveries a preview counts: past it the count says "at least" (`capped`), so the
 * preview reads a bounded number of rows.
 */
const PREVIEW_CAP = 10_000;

/** Jobs `GET /admin/deliveries/recover` lists: the recent ones an operator follows. */
const RECENT_JOBS = 20;

const Time = v.pipe(
  v.string(),
  v.isoTimestamp('Expected an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z'),
  v.transform((value) => Date.parse(value)),
  v.check((ms) => Number.isFinite(ms), 'Expected a valid date-time'),
);

const Text = v.pipe(
  v.string(),
  v.nonEmpty('Expected a non-empty string'),
  v.maxLength(MAX_EVENT_KEY_LENGTH, `Expected at most ${MAX_EVENT_KEY_LENGTH} characters`),
);

/**
 * The `POST /admin/deliveries/recover` (and `/preview`) body, strict: `since` (required)
 * and `until` (ISO 8601, on the delivery's creation, `since` inclusive, `until` exclusive
 * and later), `subscription_id`, `status` (`failed` or `pending`; absent: both), `event_type`,
 * and `operator` (who is recovering, recorded on the job and the attempts it causes).
 */
export const RecoverySchema = v.pipe(
  v.strictObject({
    since: v.pipe(Time, v.description('Deliveries created at or after this time.')),
    until: v.optional(v.pipe(Time, v.description('Deliveries created before this time.'))),
    subscription_id: v.optional(Text),
    status: v.optional(
      v.pipe(
        v.picklist(RECOVERABLE_STATUSES),
        v.description('Only this status; absent: every delivery not delivered.'),
      ),
    ),
    event_type: v.optional(Text),
    operator: v.optional(OperatorNameSchema),
  }),
  v.forward(
    v.check(
      (body) => body.until === undefined || body.since < body.until,
      'Expected `until` to be later than `since`',
    ),
    ['until'],
  ),
);

type RecoveryBody = v.InferOutput<typeof RecoverySchema>;

/**
 * `POST /admin/deliveries/recover`: starts a job re-enqueuing every delivery matching the
 * filter that is not delivered, created from `since` (inclusive) to `until` (exclusive) and
 * before the job started, in pages of 100: oldest first in each event shard, one shard after
 * another. Each is reset to `pending`, due
 * now, and enqueued once with trigger `recover` and the operator (the Cloudflare Access
 * user, else the body's `operator`); a delivery whose subscription is disabled or deleted
 * is skipped and counted (sending it would only fail it again, or revive what an operator
 * turned off). While a job with the same filter runs, that job is answered and nothing is
 * started.
 *
 * @returns 202 `{ status: 'success', data }`, `data` the job (see {@link toRecoveryJobView}),
 *   with `Location` naming `GET /admin/deliveries/recover/jobs/{id}` of the job.
 * @throws {HttpError} 400 `validation_failed` naming the field.
 */
export async function startRecovery(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: RecoveryBody,
): Promise<Response> {
  const operator = operatorOf(request, body.operator);
  const { job, started } = await launchRecoveryJob(env, 'deliveries', filterOf(body), operator);
  logEvent('info', started ? 'recovery_started' : 'recovery_already_running', {
    request_id: contextOf(request).requestId,
    job_id: job.id,
    operator,
  });
  // A 202 points at where the accepted work's progress is read.
  const location = `${ADMIN_RECOVER_PATH}/jobs/${encodeURIComponent(job.id)}`;
  return jsonResponse(
    { status: 'success', data: toRecoveryJobView(job) },
    { status: 202, headers: { Location: location } },
  );
}

/**
 * `POST /admin/deliveries/recover/preview`: how many deliveries the filter matches now,
 * without starting anything: `matched` (at most {@link PREVIEW_CAP}; `capped` when more
 * match), and `skipped_disabled`, those of them a job would skip. Every event shard is
 * counted (one bounded query each, in parallel) and the counts summed.
 *
 * @returns 200 `{ status: 'success', data: { matched, skipped_disabled, capped } }`.
 * @throws {HttpError} 400 `validation_failed` naming the field.
 */
export async function previewRecovery(
  request: IRequest,
  env: Env,
  _ctx: ExecutionContext,
  body: RecoveryBody,
): Promise<Response> {
  const filter = filterOf(body);
  const now = Date.now();
  const shards = everyEventShard(env, settingsIn(contextOf(request)));
  const views = await subscriptionsViewsOf(env.DB, shards);
  const counts = await Promise.all(
    shards.map((shard, index) =>
      countRecoverable(shard.db, filter, now, PREVIEW_CAP, views[index] ?? SUBSCRIPTIONS_TABLE),
    ),
  );
  const count = sumRecoveryCounts(counts, PREVIEW_CAP);
  return jsonResponse({
    status: 'success',
    data: { matched: count.matched, skipped_disabled: count.skippedDisabled, capped: count.capped },
  });
}

/**
 * `GET /admin/deliveries/recover`: the 20 most recently started jobs, newest first, so a
 * console can show the running ones again after a reload.
 *
 * @returns 200 `{ status: 'success', data: [...] }`, each item a job.
 */
export async function listRecoveries(_request: IRequest, env: Env): Promise<Response> {
  const jobs = await listRecoveryJobs(env.DB, RECENT_JOBS);
  return jsonResponse({ status: 'success', data: jobs.map(toRecoveryJobView) });
}

/**
 * `GET /admin/deliveries/recover/jobs/:id`: a job's progress.
 *
 * @returns 200 `{ status: 'success', data }`, `data` the job.
 * @throws {HttpError} 404 `not_found`.
 */
export async function getRecovery(request: IRequest, env: Env): Promise<Response> {
  const id = request.params.id ?? '';
  const job = await findRecoveryJob(env.DB, id);
  // JSON.stringify keeps control characters of a hostile id out of the message.
  if (job === undefined) {
    throw new HttpError(404, 'not_found', `No recovery job ${JSON.stringify(id)}`);
  }
  return jsonResponse({ status: 'success', data: toRecoveryJobView(job) });
}

/** A recovery job as the admin API shows it (times ISO 8601 UTC). */
export interface RecoveryJobView {
  id: string;
  /**
   * `deliveries`: a bulk recovery; `missed_events`: the events a subscription enabled again
   * with `requeue_pending` missed while disabled (matched: events without a delivery to it,
   * enqueued: deliveries written and sent).
   */
  kind: RecoveryJob['kind'];
  state: RecoveryJob['state'];
  filter: {
    since: string;
    until: string | null;
    subscription_id: string | null;
    status: RecoveryFilter['status'];
    event_type: string | null;
  };
  operator: string | null;
  /** Deliveries the filter matched so far. */
  matched: number;
  /** Of those, reset and enqueued. */
  enqueued: number;
  /** Of those, left alone: their subscription is disabled or deleted. */
  skipped_disabled: number;
  /** Pages of up to 100 done. */
  pages: number;
  /** Why a `failed` job stopped; `null` otherwise. */
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

/**
 * The admin view of a job.
 *
 * @param job - the stored job.
 */
export function toRecoveryJobView(job: RecoveryJob): RecoveryJobView {
  const { filter } = job;
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    filter: {
      since: iso(filter.since),
      until: filter.until === null ? null : iso(filter.until),
      subscription_id: filter.subscriptionId,
      status: filter.status,
      event_type: filter.eventType,
    },
    operator: job.operator,
    matched: job.matched,
    enqueued: job.enqueued,
    skipped_disabled: job.skippedDisabled,
    pages: job.pages,
    error: job.error,
    started_at: iso(job.startedAt),
    updated_at: iso(job.updatedAt),
    finished_at: job.finishedAt === null ? null : iso(job.finishedAt),
  };
}

function filterOf(body: RecoveryBody): RecoveryFilter {
  return {
    since: body.since,
    until: body.until ?? null,
    subscriptionId: body.subscription_id ?? null,
    status: body.status ?? null,
    eventType: body.event_type ?? null,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
