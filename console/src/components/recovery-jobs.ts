import type { AdminApi } from '../api.ts';
import { formatCount, formatTime } from '../format.ts';
import { useInterval, useLoad } from '../hooks.ts';
import { html } from '../html.ts';
import type { RecoveryJob } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';
import { StatusBadge } from './status-badge.ts';
import { TimeText } from './time-text.ts';

/** How often the jobs are read again while one of them runs, in milliseconds. */
const PROGRESS_REFRESH_MS = 2_000;

/**
 * What a job takes, in words: `failed, created from 2026-11-24 09:00:00 UTC, subscription
 * sub_…, charge_success`, or for a re-enabled subscription's job `events missed while
 * disabled, from … before …, subscription sub_…`.
 *
 * @param job - the job as the API gives it.
 */
function filterWords({ kind, filter }: RecoveryJob): string {
  const words =
    kind === 'missed_events'
      ? [`events missed while disabled, from ${formatTime(filter.since)}`]
      : [filter.status ?? 'failed and pending', `created from ${formatTime(filter.since)}`];
  if (filter.until !== null) words.push(`before ${formatTime(filter.until)}`);
  if (filter.subscription_id !== null) words.push(`subscription ${filter.subscription_id}`);
  if (filter.event_type !== null) words.push(filter.event_type);
  return words.join(', ');
}

/** Props of {@link RecoveryJobs}. */
interface RecoveryJobsProps {
  readonly api: AdminApi;
  /** The job this page started last, so the list is read again at once. */
  readonly started: RecoveryJob | null;
}

/**
 * The most recently started recovery jobs (`GET /admin/deliveries/recover`), newest first,
 * with their progress: matched, enqueued, skipped (subscription disabled or deleted) and
 * state. Read again every 2 s while one runs, so a job is followed until it is done; after a
 * reload of the page the running ones are found here again.
 */
export function RecoveryJobs({ api, started }: RecoveryJobsProps) {
  const jobs = useLoad(() => api.listRecoveries(), [started?.id, started?.updated_at]);
  const running = (jobs.data ?? []).some((job) => job.state === 'running');
  useInterval(jobs.reload, running ? PROGRESS_REFRESH_MS : null);
  const list = jobs.data;
  return html`<h3 id="recovery-jobs-heading">Recent recoveries</h3>
    <${ErrorNotice} error=${jobs.error} />
    ${
      list !== undefined &&
      (list.length === 0
        ? html`<p class="empty">No recovery started yet.</p>`
        : html`<table class="cards" aria-labelledby="recovery-jobs-heading">
          <thead>
            <tr><th scope="col">Started</th><th scope="col">Filter</th><th scope="col">By</th><th scope="col">State</th><th scope="col">Matched</th><th scope="col">Enqueued</th><th scope="col">Skipped</th></tr>
          </thead>
          <tbody>
            ${list.map(
              (job) => html`<tr key=${job.id} data-job=${job.id}>
                <td data-label="Started"><${TimeText} iso=${job.started_at} /></td>
                <td data-label="Filter">${filterWords(job)}</td>
                <td data-label="By">${job.operator ?? '—'}</td>
                <td data-label="State">
                  <${StatusBadge} status=${job.state} />
                  ${job.error !== null && html` <span>${job.error}</span>`}
                </td>
                <td data-label="Matched">${formatCount(job.matched)}</td>
                <td data-label="Enqueued">${formatCount(job.enqueued)}</td>
                <td data-label="Skipped">${formatCount(job.skipped_disabled)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`)
    }`;
}
