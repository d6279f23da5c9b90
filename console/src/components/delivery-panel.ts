import type { AdminApi } from '../api.ts';
import { answerOf, formatTime } from '../format.ts';
import { html } from '../html.ts';
import { dueIn } from '../relative-time.ts';
import type { Attempt, Delivery, Subscription } from '../types.ts';
import { CopyButton } from './copy-button.ts';
import { RetryButton } from './retry-button.ts';
import { StatusBadge } from './status-badge.ts';

/** Props of {@link DeliveryPanel}. */
interface DeliveryPanelProps {
  readonly api: AdminApi;
  readonly delivery: Delivery & { attempt_log: readonly Attempt[] };
  /** Its subscription, when it still exists. */
  readonly subscription: Subscription | undefined;
  /** Called after a retry was accepted, to reload the event. */
  readonly onChanged: () => void;
  /** The current time, epoch ms, for "next attempt in 4 min". */
  readonly now: number;
}

/** Whether an HTTP status is a 2xx (`null`: no answer came). */
function succeeded(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/**
 * Where a delivery stands, in one phrase: `failed, next attempt in 4 min` (pending after a
 * failed attempt; its answer is under "Last answer"), `not attempted yet, first attempt due
 * now`, `queued again, next attempt due now` (re-sent after a success), `delivered after 2
 * attempts`, `failed for good after 8 attempts (HTTP 410)`.
 *
 * @param delivery - the delivery as the API shows it.
 * @param now - the current time, epoch ms.
 */
function deliveryState(delivery: Delivery, now: number): string {
  const tries = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  if (delivery.status === 'delivered') return `delivered after ${tries}`;
  if (delivery.status === 'failed') {
    const last = delivery.attempts === 0 ? '' : ` (${answerOf(delivery.last_status)})`;
    return `failed for good after ${tries}${last}`;
  }
  const left = delivery.next_attempt_at === null ? 'now' : dueIn(delivery.next_attempt_at, now);
  const next = left === 'now' ? 'due now' : left;
  if (delivery.attempts === 0) return `not attempted yet, first attempt ${next}`;
  if (succeeded(delivery.last_status)) return `queued again, next attempt ${next}`;
  return `failed, next attempt ${next}`;
}

/**
 * One delivery of an event: where it goes, its status and where it stands in words
 * ("failed, next attempt in 4 min"), a Retry now button, and its attempts as a timeline
 * (time, HTTP status, latency, error, who started a manual one, the answer's first bytes).
 */
export function DeliveryPanel({ api, delivery, subscription, onChanged, now }: DeliveryPanelProps) {
  const target = subscription?.url ?? `${delivery.subscription_id} (deleted subscription)`;
  return html`<section class="delivery" aria-label=${`Delivery to ${target}`}>
    <header>
      <h3><span class="url">${target}</span></h3>
      <${StatusBadge} status=${delivery.status} />
    </header>
    <p class="delivery-state">${deliveryState(delivery, now)}</p>
    <dl class="facts">
      <dt>Delivery</dt>
      <dd>
        <code id=${`delivery-${delivery.id}`}>${delivery.id}</code>
        <${CopyButton} value=${delivery.id} label="delivery id" />
      </dd>
      <dt>Attempts</dt><dd>${delivery.attempts}</dd>
      <dt>Last answer</dt><dd>${delivery.attempts === 0 ? '—' : answerOf(delivery.last_status)}</dd>
      <dt>Next attempt</dt>
      <dd>
        ${
          delivery.next_attempt_at === null
            ? '—'
            : html`<time datetime=${delivery.next_attempt_at}>${formatTime(delivery.next_attempt_at)}</time>
              (${dueIn(delivery.next_attempt_at, now)})`
        }
      </dd>
    </dl>
    <${RetryButton} api=${api} deliveryId=${delivery.id} label="Retry now" onRetried=${onChanged} />
    ${
      delivery.attempt_log.length === 0
        ? html`<p class="empty">No attempt yet.</p>`
        : html`<ol class="timeline" aria-label="Attempts, first first">
          ${delivery.attempt_log.map((attempt) => html`<${AttemptItem} attempt=${attempt} />`)}
        </ol>`
    }
  </section>`;
}

/** Who started a manual attempt, in words: `retry by ada`, `replay`, `recovery by ops`. */
function manualLabel(attempt: Attempt): string | null {
  if (attempt.trigger === 'schedule') return null;
  const what = attempt.trigger === 'recover' ? 'recovery' : attempt.trigger;
  return attempt.operator === null ? `manual ${what}` : `manual ${what} by ${attempt.operator}`;
}

function AttemptItem({ attempt }: { attempt: Attempt }) {
  const manual = manualLabel(attempt);
  return html`<li class=${`${succeeded(attempt.status) ? 'ok' : 'failed'}${manual === null ? '' : ' manual'}`}>
    <p class="attempt-head">
      <strong>Attempt ${attempt.attempt}</strong>
      <time datetime=${attempt.started_at}>${formatTime(attempt.started_at)}</time>
      <span class="answer">${answerOf(attempt.status)}</span>
      <span class="latency">${attempt.latency_ms} ms</span>
      ${manual !== null && html`<span class="badge tone-neutral trigger">${manual}</span>`}
    </p>
    ${attempt.error !== null && html`<p class="attempt-error">${attempt.error}</p>`}
    ${
      attempt.response_excerpt !== null &&
      attempt.response_excerpt !== '' &&
      html`<pre class="excerpt" aria-label="Start of the answer">${attempt.response_excerpt}</pre>`
    }
  </li>`;
}
