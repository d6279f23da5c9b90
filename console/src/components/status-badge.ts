import { html } from '../html.ts';

/** What a status means for the operator, and so its colour. */
type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

/**
 * Each known status's tone: green when it reached its end well, amber while it is still
 * being worked on or going wrong, red when it ended badly or stopped; anything else is
 * grey. Event, delivery, delivery outcome, subscription health and recovery job statuses share
 * it.
 */
const TONES: Readonly<Record<string, Tone>> = {
  confirmed: 'ok',
  delivered: 'ok',
  done: 'ok',
  healthy: 'ok',
  enabled: 'ok',
  pending: 'warn',
  failing: 'warn',
  awaiting_confirmation: 'warn',
  running: 'warn',
  failed: 'bad',
  unconfirmed: 'bad',
  disabled: 'bad',
  dead_lettered: 'bad',
};

/**
 * An event's, a delivery's or a subscription's status as a labelled badge; the word is
 * always written, the colour only repeats it (green, amber, red or grey).
 *
 * @param props.status - e.g. `confirmed`, `unconfirmed`, `delivered`, `failed`, `healthy`.
 * @param props.label - the words shown, when they differ from the status. @default status
 */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  const tone = TONES[status] ?? 'neutral';
  return html`<span class=${`badge tone-${tone} status-${status}`}>${label ?? status}</span>`;
}
