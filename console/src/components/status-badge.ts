import { html } from '../html.ts';

/**
 * An event's or a delivery's status as a labelled badge; the word is always written, the
 * colour only repeats it.
 *
 * @param props.status - e.g. `confirmed`, `unconfirmed`, `delivered`, `failed`.
 */
export function StatusBadge({ status }: { status: string }) {
  return html`<span class=${`badge status-${status}`}>${status}</span>`;
}
