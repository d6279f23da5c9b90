// How times, statuses and bodies are written on the page.

/**
 * A time for people, in the browser's time zone, to the second.
 *
 * @param iso - an ISO 8601 time from the API.
 */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/**
 * An ISO time as the value of an `<input type="datetime-local">` (local time, minutes).
 *
 * @param iso - an ISO 8601 time, or '' for none.
 * @returns '' when `iso` is empty or not a time.
 */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (iso === '' || Number.isNaN(date.getTime())) return '';
  return formatTime(iso).slice(0, 16).replace(' ', 'T');
}

/**
 * The value of an `<input type="datetime-local">` as an ISO 8601 UTC time.
 *
 * @param value - local date and time, e.g. `2026-11-24T14:30`.
 * @returns '' when the field is empty or not a time.
 */
export function fromLocalInput(value: string): string {
  const date = new Date(value);
  return value === '' || Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

/**
 * A JSON body indented for reading; a body that is not JSON is shown as it is.
 *
 * @param raw - the exact bytes received, as text.
 */
export function prettyJson(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/**
 * A subscriber's answer in a few words: `HTTP 500`, or `no answer`.
 *
 * @param status - the HTTP status, `null` when nothing answered.
 */
export function answerOf(status: number | null): string {
  return status === null ? 'no answer' : `HTTP ${status}`;
}

/**
 * Event types typed as a comma-separated list: `null` (every type) when empty.
 *
 * @param text - e.g. `charge_success, disbursement_success`.
 */
export function parseEventTypes(text: string): string[] | null {
  const types = text
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '');
  return types.length === 0 ? null : types;
}
