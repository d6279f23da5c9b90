import { formatTime, timeWords } from '../format.ts';
import { html } from '../html.ts';

/**
 * A time as `formatTime` writes it (`2026-11-24 14:30:05 UTC`) in a `<time>` element, its
 * date, clock and zone each kept on one line: a narrow column wraps it between them,
 * never after a hyphen of the date.
 *
 * @param props.iso - an ISO 8601 time from the API.
 * @param props.precision - `'second'` (the default) or `'minute'`.
 */
export function TimeText({
  iso,
  precision = 'second',
}: {
  iso: string;
  precision?: 'second' | 'minute';
}) {
  const words = timeWords(iso, precision);
  if (words === null) return html`<time datetime=${iso}>${formatTime(iso)}</time>`;
  const [date, clock, zone] = words;
  return html`<time class="when" datetime=${iso}><span>${date}</span> <span>${clock}</span> <span>${zone}</span></time>`;
}
