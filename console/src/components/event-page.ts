import type { AdminApi } from '../api.ts';
import { formatTime, prettyJson } from '../format.ts';
import { useInterval, useLoad } from '../hooks.ts';
import { html } from '../html.ts';
import { formatAmount } from '../money.ts';
import { dueIn } from '../relative-time.ts';
import type {
  Confirmation,
  EventDetail,
  EventOutcome,
  EventStatus,
  Subscription,
} from '../types.ts';
import { CopyButton } from './copy-button.ts';
import { DeliveryPanel } from './delivery-panel.ts';
import { ErrorNotice } from './error-notice.ts';
import { OUTCOME_LABELS } from './events-page.ts';
import { ReplayForm } from './replay-form.ts';
import { StatusBadge } from './status-badge.ts';

/** How often the event is reloaded while a delivery is pending or a check awaited, in milliseconds. */
const PENDING_REFRESH_MS = 2000;

/** What each confirmation status means, in the page's words. */
const CONFIRMATION: Record<EventStatus, string> = {
  confirmed: 'The payment service confirmed the record this event names.',
  awaiting_confirmation:
    'The payment service cannot confirm this event yet: it is held, undelivered, and checked again on a schedule; it is delivered the moment it is confirmed.',
  unconfirmed:
    'The payment service contradicted this event, or never confirmed it: it was stored but not delivered, and is replayed only when forced.',
  received: 'Not checked against the payment service (not a money event, or confirmation is off).',
};

/** Why a held event has no delivery, by its status. */
const HELD: Partial<Record<EventStatus, string>> = {
  awaiting_confirmation: 'the event is held until the payment service confirms it',
  unconfirmed:
    'the event was held back as unconfirmed; it is delivered only if replayed with force',
};

/** What each delivery outcome means, in the page's words. */
const OUTCOME: Record<EventOutcome, string> = {
  failed: 'A delivery failed for good: retry it below once its subscriber is fixed.',
  failing: 'A delivery failed and will be tried again on its schedule.',
  pending: 'A delivery is waiting for its first attempt.',
  held: 'Not sent to any subscriber while the payment service has not confirmed it.',
  delivered: 'Every subscriber acknowledged it.',
  no_subscriber: 'No enabled subscription asked for this event type.',
};

/** The checks of a money event: the last finding, how many, and when the next one is due. */
function ConfirmationFacts({ confirmation, now }: { confirmation: Confirmation; now: number }) {
  const next = confirmation.next_check_at;
  return html`<dt>Reason</dt><dd>${confirmation.reason ?? '—'}</dd>
    <dt>Checks</dt>
    <dd>
      ${confirmation.checks}${
        confirmation.checked_at !== null &&
        html`, last at <time datetime=${confirmation.checked_at}>${formatTime(confirmation.checked_at)}</time>`
      }
    </dd>
    <dt>Next check</dt>
    <dd>
      ${next === null ? 'none' : html`<time datetime=${next}>${formatTime(next)}</time> (${dueIn(next, now)})`}
    </dd>`;
}

/**
 * One event: what it is (id with a copy button, amount of a money event), whether it reached
 * its subscribers, its confirmation (the reason, the checks made and when the next one is due,
 * "in 4 min", while it awaits confirmation), each delivery with where it stands ("failed, next
 * attempt in 4 min") and its attempts, manual ones marked with who started them (reloaded
 * every 2 s while one is pending or the event awaits confirmation), the replay form and the
 * exact body received.
 */
export function EventPage({ api, id }: { api: AdminApi; id: string }) {
  const event = useLoad(() => api.getEvent(id), [id]);
  const subscriptions = useLoad(() => api.listSubscriptions(), []);
  const pending =
    event.data?.status === 'awaiting_confirmation' ||
    (event.data?.deliveries.some((d) => d.status === 'pending') ?? false);
  useInterval(event.reload, pending ? PENDING_REFRESH_MS : null);
  const data = event.data;
  return html`<p class="crumbs"><a href="#/events">← Events</a></p>
    <h1 tabindex="-1">${data === undefined ? 'Event' : `Event ${data.event_type}`}</h1>
    <${ErrorNotice} error=${event.error} />
    <${ErrorNotice} error=${subscriptions.error} />
    ${
      data === undefined
        ? event.error === undefined && html`<p role="status">Loading…</p>`
        : html`<${EventBody} api=${api} event=${data} subscriptions=${subscriptions.data ?? []} reload=${event.reload} />`
    }`;
}

interface EventBodyProps {
  api: AdminApi;
  event: EventDetail;
  subscriptions: readonly Subscription[];
  reload: () => void;
}

function EventBody({ api, event, subscriptions, reload }: EventBodyProps) {
  const byId = new Map(subscriptions.map((s) => [s.id, s]));
  const forced = event.forced_replays;
  // Read at each render: the page reloads every 2 s while anything is due, so "in 4 min" counts down.
  const now = Date.now();
  return html`<dl class="facts">
      <dt>Event id</dt>
      <dd><code>${event.event_id}</code> <${CopyButton} value=${event.event_id} label="event id" /></dd>
      <dt>Type</dt><dd>${event.event_type}</dd>
      <dt>Reference</dt><dd>${event.reference ?? '—'}</dd>
      ${
        event.amount !== null &&
        html`<dt>Amount</dt><dd class="amount">${formatAmount(event.amount, event.currency)}</dd>`
      }
      <dt>Received</dt><dd><time datetime=${event.received_at}>${formatTime(event.received_at)}</time></dd>
      <dt>Delivery</dt>
      <dd>
        <${StatusBadge} status=${event.outcome} label=${OUTCOME_LABELS[event.outcome]} />
        ${' '}${OUTCOME[event.outcome]}
      </dd>
      <dt>Confirmation</dt>
      <dd><${StatusBadge} status=${event.status} /> ${CONFIRMATION[event.status]}</dd>
      ${event.confirmation !== null && html`<${ConfirmationFacts} confirmation=${event.confirmation} now=${now} />`}
      ${
        forced.length > 0 &&
        html`<dt>${forced.length === 1 ? 'Forced replay' : 'Forced replays'}</dt>
        ${forced.map(
          (replay) =>
            html`<dd>by ${replay.by} from ${replay.from} at <time datetime=${replay.at}>${formatTime(replay.at)}</time></dd>`,
        )}`
      }
    </dl>
    <h2>Deliveries</h2>
    ${
      event.deliveries.length === 0
        ? html`<p class="empty">No delivery: ${(event.outcome === 'held' && HELD[event.status]) || 'no enabled subscription matched'}.</p>`
        : event.deliveries.map(
            (delivery) => html`<${DeliveryPanel}
            key=${delivery.id}
            api=${api}
            delivery=${delivery}
            subscription=${byId.get(delivery.subscription_id)}
            onChanged=${reload}
            now=${now}
          />`,
          )
    }
    <${ReplayForm} api=${api} event=${event} subscriptions=${subscriptions} onReplayed=${reload} />
    <h2 id="raw-body-heading">Body as received</h2>
    <pre class="body" tabindex="0" aria-labelledby="raw-body-heading">${prettyJson(event.raw_body)}</pre>`;
}
