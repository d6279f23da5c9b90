import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { formatTime } from '../format.ts';
import { useInterval, useLoad, usePager } from '../hooks.ts';
import { html } from '../html.ts';
import { formatAmount } from '../money.ts';
import { hrefOf } from '../route.ts';
import type { EventOutcome } from '../types.ts';
import { CopyButton } from './copy-button.ts';
import { ErrorNotice } from './error-notice.ts';
import { EventFilters, eventQueryOf } from './event-filters.ts';
import { PagerNav } from './pager-nav.ts';
import { StatusBadge } from './status-badge.ts';

/** Events per page. */
const PAGE_SIZE = 25;
/** How often the first page is reloaded while live refresh is on, in milliseconds. */
const LIVE_REFRESH_MS = 5000;

/** Each delivery outcome in the words of the list. */
export const OUTCOME_LABELS: Readonly<Record<EventOutcome, string>> = {
  failed: 'failed',
  failing: 'failing',
  pending: 'pending',
  held: 'held',
  delivered: 'delivered',
  no_subscriber: 'no subscriber',
};

/** Props of {@link EventsPage}. */
interface EventsPageProps {
  readonly api: AdminApi;
  /** The filters of the URL (`event_type`, `status`, `outcome`, `from`, `to`, `reference_prefix`, ...). */
  readonly filters: URLSearchParams;
}

/**
 * The event list, newest first: when, type, reference, the amount of a money event, its
 * confirmation, whether it reached its subscribers (delivery outcome) and its id with a copy
 * button; filters, keyset paging (Newer / Older), and live refresh of the first page every 5 s.
 */
export function EventsPage({ api, filters }: EventsPageProps) {
  const pager = usePager();
  const [live, setLive] = useState(true);
  const [seenTypes, setSeenTypes] = useState<readonly string[]>([]);
  const list = useLoad(async () => {
    const page = await api.listEvents({
      ...eventQueryOf(filters),
      page_size: PAGE_SIZE,
      ...(pager.cursor === undefined ? {} : { cursor: pager.cursor }),
    });
    setSeenTypes((seen) => [...new Set([...seen, ...page.data.map((e) => e.event_type)])].sort());
    return page;
  }, [pager.cursor]);
  useInterval(list.reload, live && pager.page === 1 ? LIVE_REFRESH_MS : null);
  const events = list.data?.data ?? [];
  return html`<h1 tabindex="-1">Events</h1>
    <${EventFilters} filters=${filters} knownTypes=${seenTypes} />
    <div class="toolbar">
      <label class="check">
        <input
          type="checkbox"
          checked=${live}
          onChange=${(e: Event) => setLive((e.currentTarget as HTMLInputElement).checked)}
        />
        Live refresh (first page, every 5 s)
      </label>
      <button type="button" onClick=${list.reload}>Refresh now</button>
      <span class="meta">
        ${list.loadedAt === undefined ? 'Loading…' : `Updated ${formatTime(list.loadedAt.toISOString())}`}
      </span>
    </div>
    <${ErrorNotice} error=${list.error} />
    ${
      list.data !== undefined &&
      (events.length === 0
        ? html`<p class="empty">No events match these filters.</p>`
        : html`<table class="cards">
          <caption class="visually-hidden">Events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Received</th><th scope="col">Type</th><th scope="col">Reference</th>
              <th scope="col">Amount</th><th scope="col">Confirmation</th><th scope="col">Delivery</th>
              <th scope="col">Event</th>
            </tr>
          </thead>
          <tbody>
            ${events.map(
              (event) => html`<tr key=${event.event_id}>
                <td data-label="Received"><time datetime=${event.received_at}>${formatTime(event.received_at)}</time></td>
                <td data-label="Type">${event.event_type}</td>
                <td data-label="Reference">${event.reference ?? '—'}</td>
                <td data-label="Amount" class="amount">
                  ${event.amount === null ? '—' : formatAmount(event.amount, event.currency)}
                </td>
                <td data-label="Confirmation"><${StatusBadge} status=${event.status} /></td>
                <td data-label="Delivery">
                  <${StatusBadge} status=${event.outcome} label=${OUTCOME_LABELS[event.outcome]} />
                </td>
                <td data-label="Event">
                  <a class="id" href=${hrefOf({ page: 'event', id: event.event_id })}>${event.event_id}</a>
                  <${CopyButton} value=${event.event_id} label="event id" />
                </td>
              </tr>`,
            )}
          </tbody>
        </table>`)
    }
    <${PagerNav} pager=${pager} nextCursor=${list.data?.next_cursor} label="Event pages" />`;
}
