/**
 * Bulk recovery, the queue side: each `{ kind: 'recover', jobId, page }` message of the
 * DELIVERIES queue takes one page of the job's deliveries (at most
 * {@link RECOVERY_PAGE_SIZE}: one read, one D1 batch, one `sendBatch`), enqueues the ones it
 * reset with trigger `recover`, and sends the message of the next page. So one Worker
 * invocation reads and writes a bounded number of rows however many deliveries match, and
 * the job's row in `DB` (worker/db/recovery-jobs.ts) holds its progress between messages.
 * With several event shards (`D1_SHARDS`) a job walks them one after another: a page reads
 * one shard, and the shard's last page moves the job's cursor to the start of the next.
 */

import { readMissedEventsPage } from '../db/missed-event-pages.ts';
import {
  failRecoveryJob,
  findRecoveryJob,
  type RecoveryFilter,
  type RecoveryJob,
  type RecoveryJobKind,
  startRecoveryJob,
} from '../db/recovery-jobs.ts';
import { readRecoveryPage } from '../db/recovery-pages.ts';
import { subscriptionsViewFor } from '../db/subscription-snapshot.ts';
import { logEvent } from '../http/log.ts';
import { takeRecoveryStep, walkOf } from './recovery-take.ts';

/**
 * Deliveries per page of a recovery: one `sendBatch` (the Queues limit is 100 messages).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const RECOVERY_PAGE_SIZE = 100;

/**
 * Deliveries of a recovery message that fail before giving up on the job: a step that
 * keeps failing (D1 or Queues down) ends the job `failed`, with the error, within a minute,
 * instead of holding its filter on the long delivery schedule.
 */
const RECOVERY_MAX_ATTEMPTS = 5;

/** Seconds before a failed step is tried again, times the message's attempts. */
const RECOVERY_RETRY_STEP_SEC = 5;

/**
 * How long a running job may go without progress before a new request with its filter
 * replaces it (its messages were lost): an hour, far longer than a page takes even
 * behind a long queue backlog.
 */
const STALL_MS = 60 * 60 * 1000;

/**
 * A DELIVERIES message asking for one page of a recovery job: `kind` tells it from a
 * delivery's `{ deliveryId }`. `page` is the number of pages done when it was sent; a
 * message whose page the job has already taken changes nothing.
 */
export interface RecoveryMessage {
  readonly kind: 'recover';
  readonly jobId: string;
  readonly page: number;
}

/**
 * Whether a message body is a {@link RecoveryMessage}.
 *
 * @param body - the message body as received.
 */
export function isRecoveryMessage(body: unknown): body is RecoveryMessage {
  if (typeof body !== 'object' || body === null) return false;
  const { kind, jobId, page } = body as Partial<Record<string, unknown>>;
  return (
    kind === 'recover' &&
    typeof jobId === 'string' &&
    Number.isSafeInteger(page) &&
    (page as number) >= 0
  );
}

/**
 * Runs one step of a recovery job and acks the message, or retries it after an error (up
 * to {@link RECOVERY_MAX_ATTEMPTS}, then the job is `failed` with the error):
 * - the job is gone or no longer running: nothing to do;
 * - its page was already taken (the message came again): the next page's message is sent
 *   again when this was the latest page, since the first run may have stopped before
 *   sending it (a duplicate next message is harmless: only one takes its page);
 * - else the page is read, taken (worker/db/recovery-pages.ts; for a `missed_events` job,
 *   the events a re-enabled subscription missed, worker/db/missed-event-pages.ts), its reset
 *   or new deliveries enqueued with trigger `recover`, and the next page's message sent
 *   unless it was the last.
 *
 * A crash between taking a page and enqueuing its deliveries leaves them `pending` and due,
 * never enqueued twice: the cron sweeper sends them (as the relay's own schedule). On a
 * shard other than `DB` the page is taken there first (guarded by its own row there) and
 * the job moved in `DB` after: a step run again in between moves the job with the counts
 * the first run recorded and resets nothing again (worker/db/recovery-shard-pages.ts).
 *
 * @param message - the DELIVERIES message.
 * @param body - its body.
 * @param env - bindings (`DB`, the event shards, `DELIVERIES`).
 */
export async function consumeRecoveryMessage(
  message: Message<unknown>,
  body: RecoveryMessage,
  env: Env,
): Promise<void> {
  try {
    await runRecoveryStep(body, env);
    message.ack();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logEvent('error', 'recovery_step_failed', {
      job_id: body.jobId,
      page: body.page,
      attempt: message.attempts,
      error_message: reason,
    });
    if (message.attempts < RECOVERY_MAX_ATTEMPTS) {
      message.retry({ delaySeconds: RECOVERY_RETRY_STEP_SEC * message.attempts });
      return;
    }
    await failRecoveryJob(env.DB, body.jobId, `page ${body.page} failed: ${reason}`, Date.now());
    message.ack();
  }
}

/**
 * Starts a recovery job and sends its first page message, or answers the job already running
 * with the same kind and filter (nothing is started then).
 *
 * @param env - bindings (`DB`, `DELIVERIES`).
 * @param kind - what the job walks.
 * @param filter - its filter.
 * @param operator - who asked, `null` when no name was given.
 * @returns the running job and whether this call started it.
 * @throws whatever D1 or the queue throws; a job whose first message could not be sent is
 *   ended `failed` first, so it does not hold its filter until it stalls.
 */
export async function launchRecoveryJob(
  env: Env,
  kind: RecoveryJobKind,
  filter: RecoveryFilter,
  operator: string | null,
): Promise<{ job: RecoveryJob; started: boolean }> {
  const id = `rcv_${crypto.randomUUID()}`;
  const now = Date.now();
  const launched = await startRecoveryJob(env.DB, id, filter, operator, now, STALL_MS, kind);
  if (!launched.started) return launched;
  const first: RecoveryMessage = { kind: 'recover', jobId: id, page: 0 };
  try {
    await env.DELIVERIES.send(first);
  } catch (error) {
    await failRecoveryJob(env.DB, id, 'the first page could not be enqueued', Date.now());
    throw error;
  }
  return launched;
}

async function runRecoveryStep({ jobId, page }: RecoveryMessage, env: Env): Promise<void> {
  const job = await findRecoveryJob(env.DB, jobId);
  if (job === undefined || job.state !== 'running') return;
  const next: RecoveryMessage = { kind: 'recover', jobId, page: page + 1 };
  if (job.pages !== page) {
    if (job.pages === page + 1) await env.DELIVERIES.send(next);
    return;
  }
  const walk = walkOf(env, job);
  const view = await subscriptionsViewFor(env.DB, walk.shard);
  const missed = job.kind === 'missed_events';
  const candidates = missed
    ? await readMissedEventsPage(walk.shard.db, job, RECOVERY_PAGE_SIZE, view)
    : await readRecoveryPage(walk.shard.db, job, job.startedAt, RECOVERY_PAGE_SIZE, view);
  const last = candidates.length < RECOVERY_PAGE_SIZE;
  const now = Date.now();
  const step = { page, candidates, last, ...(walk.next === undefined ? {} : { next: walk.next }) };
  const taken = await takeRecoveryStep(env, job, { shard: walk.shard, view }, step, now);
  if (!taken.moved) return;
  logEvent('info', 'recovery_page_taken', {
    job_id: jobId,
    page,
    shard: walk.shard.name,
    matched: candidates.length,
    enqueued: taken.enqueued,
    last: taken.done,
  });
  if (!taken.done) await env.DELIVERIES.send(next);
}
