import { formatCount, formatTime } from '../format.ts';
import { html } from '../html.ts';
import type { Subscription, SubscriptionHealth } from '../types.ts';
import { StatusBadge } from './status-badge.ts';
import { TimeText } from './time-text.ts';

/** An ISO 8601 UTC time inside the API's words (`… from the subscriber at 2026-…Z`). */
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/**
 * A health reason with the times the gateway wrote in it in the console's one format and
 * chosen zone (`410 Gone from the subscriber at 2026-11-24 14:30:05 UTC`).
 *
 * @param reason - the health's `reason`.
 */
function reasonWords(reason: string): string {
  return reason.replace(ISO_TIME, (iso) => formatTime(iso));
}

/**
 * The last day's success rate in words: `97.5 % of 40 attempts in 24 h (39 delivered, 1
 * failed)`, or `no attempt in 24 h`.
 *
 * @param rate - the health's `success_rate`.
 */
function rateWords(rate: SubscriptionHealth['success_rate']): string {
  const window = `${rate.window_hours} h`;
  if (rate.attempts === 0 || rate.rate === null) return `no attempt in ${window}`;
  const share = `${(Math.round(rate.rate * 1000) / 10).toFixed(1)} %`;
  const noun = rate.attempts === 1 ? 'attempt' : 'attempts';
  return `${share} of ${formatCount(rate.attempts)} ${noun} in ${window} (${formatCount(rate.succeeded)} delivered, ${formatCount(rate.failed)} failed)`;
}

/**
 * A subscriber's health as facts of its subscription: its state as a badge (green healthy,
 * amber failing, red disabled), why and since when, the start of a run of failures, and the
 * last day's success rate.
 *
 * @param props.health - the subscription's `health`.
 */
export function HealthFacts({ health }: { health: SubscriptionHealth }) {
  return html`<dt>Health</dt>
    <dd class="health">
      <${StatusBadge} status=${health.state} />
      ${' '}<span class="reason">${health.reason === null ? 'no change since it was created' : reasonWords(health.reason)}</span>
      <span class="meta"> · since <${TimeText} iso=${health.changed_at} /></span>
    </dd>
    ${
      health.failing_since !== null &&
      health.state !== 'disabled' &&
      html`<dt>Failing since</dt><dd><${TimeText} iso=${health.failing_since} /></dd>`
    }
    <dt>Success rate</dt><dd>${rateWords(health.success_rate)}</dd>`;
}

/**
 * The delivery limits and ordering of a subscription as facts: `2 a second`, `at most 5 at
 * the same time`, `ordered per reference`, or the defaults in words.
 *
 * @param props.subscription - the subscription.
 */
export function LimitFacts({ subscription }: { subscription: Subscription }) {
  const { max_per_second: perSecond, max_in_flight: inFlight, ordered } = subscription;
  return html`<dt>Rate limit</dt>
    <dd>${perSecond === null ? 'none' : `${perSecond} attempts a second at most`}</dd>
    <dt>In flight</dt>
    <dd>${inFlight === null ? 'the relay’s default (10 at the same time)' : `${inFlight} at the same time at most`}</dd>
    <dt>Ordering</dt>
    <dd>${ordered ? 'ordered per reference' : 'not ordered'}</dd>`;
}
