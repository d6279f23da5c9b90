import type { AdminApi } from '../api.ts';
import { answerOf, formatTime } from '../format.ts';
import { html } from '../html.ts';
import type { Attempt, Delivery, Subscription } from '../types.ts';
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
}

/**
 * One delivery of an event: where it goes, its status, a Retry now button, and its
 * attempts as a timeline (time, HTTP status, latency, error, the answer's first bytes).
 */
export function DeliveryPanel({ api, delivery, subscription, onChanged }: DeliveryPanelProps) {
  const target = subscription?.url ?? `${delivery.subscription_id} (deleted subscription)`;
  return html`<section class="delivery" aria-label=${`Delivery to ${target}`}>
    <header>
      <h3><span class="url">${target}</span></h3>
      <${StatusBadge} status=${delivery.status} />
    </header>
    <dl class="facts">
      <dt>Delivery</dt><dd><code id=${`delivery-${delivery.id}`}>${delivery.id}</code></dd>
      <dt>Attempts</dt><dd>${delivery.attempts}</dd>
      <dt>Last answer</dt><dd>${delivery.attempts === 0 ? '—' : answerOf(delivery.last_status)}</dd>
      <dt>Next attempt</dt>
      <dd>${delivery.next_attempt_at === null ? '—' : formatTime(delivery.next_attempt_at)}</dd>
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

function AttemptItem({ attempt }: { attempt: Attempt }) {
  const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
  return html`<li class=${ok ? 'ok' : 'failed'}>
    <p class="attempt-head">
      <strong>Attempt ${attempt.attempt}</strong>
      <time datetime=${attempt.started_at}>${formatTime(attempt.started_at)}</time>
      <span class="answer">${answerOf(attempt.status)}</span>
      <span class="latency">${attempt.latency_ms} ms</span>
    </p>
    ${attempt.error !== null && html`<p class="attempt-error">${attempt.error}</p>`}
    ${
      attempt.response_excerpt !== null &&
      attempt.response_excerpt !== '' &&
      html`<pre class="excerpt" aria-label="Start of the answer">${attempt.response_excerpt}</pre>`
    }
  </li>`;
}
