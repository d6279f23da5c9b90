import { fromLocalInput, TIME_INPUT_FORMAT, zoneName } from '../format.ts';
import { html } from '../html.ts';

// A time is typed as text in the console's own format, not in a native date-time picker:
// Chromium draws that one in the browser locale's format (`mm/dd/yyyy --:-- --`, 12-hour,
// under en-US) and cannot name the time zone the console reads it in.

/**
 * Why a time field's text cannot be sent, naming the field, or `null` when it can (it is
 * empty or a time).
 *
 * @param label - the field's label without the zone, `Received from`.
 * @param value - the field's text.
 */
export function timeFieldError(label: string, value: string): string | null {
  if (fromLocalInput(value) !== null) return null;
  return `${label}: "${value.trim()}" is not a time. Write it as ${TIME_INPUT_FORMAT} (seconds optional), in ${zoneName()}.`;
}

/** Props of {@link TimeField}. */
interface TimeFieldProps {
  readonly id: string;
  /** The field's label without the zone, which the field adds: `Received from`. */
  readonly label: string;
  readonly value: string;
  readonly onInput: (event: Event) => void;
  /** Why the text cannot be sent ({@link timeFieldError}), shown under the field; `null` for none. */
  readonly error: string | null;
  readonly required?: boolean;
}

/**
 * A time typed as `2026-11-24 14:30` (seconds optional) in the chosen time zone, which the
 * label names: `Received from (UTC)`.
 */
export function TimeField({ id, label, value, onInput, error, required = false }: TimeFieldProps) {
  return html`<div class="field">
    <label for=${id}>${label} (${zoneName()})</label>
    <input
      id=${id}
      type="text"
      autocomplete="off"
      spellcheck=${false}
      placeholder=${TIME_INPUT_FORMAT}
      required=${required}
      value=${value}
      onInput=${onInput}
      aria-invalid=${error === null ? undefined : 'true'}
      aria-describedby=${error === null ? undefined : `${id}-error`}
    />
    ${error !== null && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}
