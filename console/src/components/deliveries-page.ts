import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { answerOf, formatTime } from '../format.ts';
import { useInterval, useLoad, usePager } from '../hooks.ts';
import { html } from '../html.ts';
import { hrefOf } from '../route.ts';
import type { DeliveryListItem, DeliveryStatus, RecoveryJob } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';
import { HourlyChart } from './hourly-chart.ts';
import { PagerNav } from './pager-nav.ts';
import { RecoverForm } from './recover-form.ts';
import { RecoveryJobs } from './recovery-jobs.ts';
import { RetryButton } from './retry-button.ts';
import { StatusBadge } from './status-badge.ts';

/** Deliveries per page of the list. */
const PAGE_SIZE = 25;
/** The chart's span, in hours. */
const CHART_HOURS = 24;
/** How often the page is reloaded while live refresh is on, in milliseconds. */
const LIVE_REFRESH_MS = 10_000;
const STATUSES: readonly DeliveryStatus[] = ['failed', 'pending', 'delivered'];

/**
 * Deliveries at a glance: counts by status, a chart of the last 24 hours by status, and
 * the list of one status (failed first) with a Retry button on each, and bulk recovery:
 * re-enqueue every undelivered delivery matching a filter, previewed first, its progress
 * followed until done.
 */
export function DeliveriesPage({ api }: { api: AdminApi }) {
  const [status, setStatus] = useState<DeliveryStatus>('failed');
  const [live, setLive] = useState(true);
  const [started, setStarted] = useState<RecoveryJob | null>(null);
  const pager = usePager();
  const counts = useLoad(() => api.countDeliveries(), []);
  const hours = useLoad(() => api.deliveriesByHour(CHART_HOURS), []);
  const list = useLoad(
    () =>
      api.listDeliveries({
        status,
        page_size: PAGE_SIZE,
        ...(pager.cursor === undefined ? {} : { cursor: pager.cursor }),
      }),
    [status, pager.cursor],
  );
  const subscriptions = useLoad(() => api.listSubscriptions(), []);
  const reload = () => {
    counts.reload();
    hours.reload();
    list.reload();
  };
  useInterval(reload, live ? LIVE_REFRESH_MS : null);
  const urls = new Map((subscriptions.data ?? []).map((s) => [s.id, s.url]));
  const c = counts.data;
  return html`<h1 tabindex="-1">Deliveries</h1>
    <div class="toolbar">
      <label class="check">
        <input type="checkbox" checked=${live} onChange=${(e: Event) => setLive((e.currentTarget as HTMLInputElement).checked)} />
        Live refresh (every 10 s)
      </label>
      <button type="button" onClick=${reload}>Refresh now</button>
    </div>
    <${ErrorNotice} error=${counts.error} />
    ${
      c !== undefined &&
      html`<dl class="counts" aria-label="Deliveries by status">
      <div><dt>Delivered</dt><dd>${c.delivered}</dd></div>
      <div><dt>Pending</dt><dd>${c.pending}</dd></div>
      <div><dt>Failed</dt><dd>${c.failed}</dd></div>
      <div><dt>Total</dt><dd>${c.total}</dd></div>
    </dl>`
    }
    <h2>Last ${CHART_HOURS} hours</h2>
    <${ErrorNotice} error=${hours.error} />
    ${hours.data !== undefined && html`<${HourlyChart} hours=${hours.data} />`}
    <h2 id="delivery-list-heading">Deliveries by status</h2>
    <div class="field inline">
      <label for="delivery-status">Show</label>
      <select
        id="delivery-status"
        value=${status}
        onChange=${(e: Event) => {
          setStatus((e.currentTarget as HTMLSelectElement).value as DeliveryStatus);
          pager.reset();
        }}
      >
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
    </div>
    <${ErrorNotice} error=${list.error} />
    ${
      list.data !== undefined &&
      (list.data.data.length === 0
        ? html`<p class="empty">No ${status} delivery.</p>`
        : html`<table class="cards" aria-labelledby="delivery-list-heading">
          <thead>
            <tr><th scope="col">Updated</th><th scope="col">Event</th><th scope="col">Subscriber</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            ${list.data.data.map(
              (delivery) =>
                html`<${DeliveryRow} key=${delivery.id} api=${api} delivery=${delivery} url=${urls.get(delivery.subscription_id)} onRetried=${reload} />`,
            )}
          </tbody>
        </table>`)
    }
    <${PagerNav} pager=${pager} nextCursor=${list.data?.next_cursor} label="Delivery pages" />
    <h2 id="recover-heading">Bulk recovery</h2>
    <p>
      Re-enqueue every delivery not delivered that the filter matches, oldest first; those of a
      disabled or deleted subscription are skipped (re-enable it first).
    </p>
    <${RecoverForm} api=${api} onStarted=${(job: RecoveryJob) => {
      setStarted(job);
      reload();
    }} />
    <${RecoveryJobs} api=${api} started=${started} />`;
}

interface DeliveryRowProps {
  api: AdminApi;
  delivery: DeliveryListItem;
  url: string | undefined;
  onRetried: () => void;
}

function DeliveryRow({ api, delivery, url, onRetried }: DeliveryRowProps) {
  return html`<tr>
    <td data-label="Updated">${formatTime(delivery.updated_at)}</td>
    <td data-label="Event">
      <a href=${hrefOf({ page: 'event', id: delivery.event_id })}>${delivery.event_type}</a>
    </td>
    <td data-label="Subscriber" class="url">${url ?? delivery.subscription_id}</td>
    <td data-label="Status"><${StatusBadge} status=${delivery.status} /></td>
    <td data-label="Attempts">${delivery.attempts}</td>
    <td data-label="Last answer">${delivery.attempts === 0 ? '—' : answerOf(delivery.last_status)}</td>
    <td data-label="Actions">
      <span class="visually-hidden" id=${`delivery-${delivery.id}`}>delivery ${delivery.id}</span>
      <${RetryButton} api=${api} deliveryId=${delivery.id} label="Retry" onRetried=${onRetried} />
    </td>
  </tr>`;
}
