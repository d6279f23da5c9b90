import { useId, useState } from 'preact/hooks';
import { type AdminApi, ApiError } from '../api.ts';
import { useLoad } from '../hooks.ts';
import { html } from '../html.ts';
import type { Subscription, SubscriptionInput } from '../types.ts';
import { ErrorNotice, fieldOf } from './error-notice.ts';
import { type EventTypeChoice, EventTypePicker } from './event-type-picker.ts';

/** The fields the form edits; an issue at any other path is listed under the form. */
const FIELDS = [
  'url',
  'event_types',
  'description',
  'enabled',
  'max_per_second',
  'max_in_flight',
  'ordered',
] as const;

/** Props of {@link SubscriptionForm}. */
interface SubscriptionFormProps {
  /** Reads the event-type catalog for the picker. */
  readonly api: AdminApi;
  /** The subscription being edited; absent to create one. */
  readonly initial?: Subscription;
  readonly submitLabel: string;
  /** Sends the fields; an ApiError it throws is shown, its issues beside their fields. */
  readonly onSubmit: (input: SubscriptionInput) => Promise<void>;
  readonly onCancel: () => void;
}

/** A number field's value: `null` when empty, else the number typed (the API judges its range). */
function numberOrNull(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

/**
 * The fields of a subscription: URL, event types (picked from the catalog), description,
 * the enabled flag, and the delivery limits (attempts a second, at the same time) and
 * per-reference ordering. The gateway judges each field: its message is shown under it.
 */
export function SubscriptionForm({
  api,
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: SubscriptionFormProps) {
  const id = useId();
  const catalog = useLoad(() => api.listEventTypes(), []);
  const [url, setUrl] = useState(initial?.url ?? '');
  // Types the gateway took before were accepted as custom then: the flag is asked again.
  const [types, setTypes] = useState<EventTypeChoice>({
    types: initial?.event_types ?? null,
    custom: false,
  });
  const [description, setDescription] = useState(initial?.description ?? '');
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [perSecond, setPerSecond] = useState(String(initial?.max_per_second ?? ''));
  const [inFlight, setInFlight] = useState(String(initial?.max_in_flight ?? ''));
  const [ordered, setOrdered] = useState(initial?.ordered ?? false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const issues = error instanceof ApiError ? error.issues : [];
  const issueAt = (field: string) =>
    issues
      .filter((issue) => fieldOf(issue) === field)
      .map((issue) => issue.message)
      .join(' ') || undefined;
  const known = new Set((catalog.data ?? []).map((entry) => entry.type));
  const custom =
    types.custom || (initial?.event_types ?? []).some((type) => catalog.data && !known.has(type));
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit({
        url: url.trim(),
        event_types: types.types === null ? null : [...types.types],
        description: description.trim() === '' ? null : description.trim(),
        enabled,
        max_per_second: numberOrNull(perSecond),
        max_in_flight: numberOrNull(inFlight),
        ordered,
        ...(custom && types.types !== null ? { allow_custom_event_types: true } : {}),
      });
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  const text = (
    field: string,
    label: string,
    value: string,
    set: (v: string) => void,
    hint?: string,
    kind: 'text' | 'number' = 'text',
  ) => {
    const problem = issueAt(field);
    const described = [hint && `${id}-${field}-hint`, problem && `${id}-${field}-error`]
      .filter(Boolean)
      .join(' ');
    return html`<div class="field">
      <label for=${`${id}-${field}`}>${label}</label>
      <input
        id=${`${id}-${field}`}
        value=${value}
        type=${kind}
        step=${kind === 'number' ? 'any' : undefined}
        min=${kind === 'number' ? '0' : undefined}
        onInput=${(e: Event) => set((e.currentTarget as HTMLInputElement).value)}
        aria-invalid=${problem === undefined ? undefined : 'true'}
        aria-describedby=${described === '' ? undefined : described}
        inputmode=${field === 'url' ? 'url' : kind === 'number' ? 'decimal' : undefined}
        required=${field === 'url'}
      />
      ${hint && html`<p class="hint" id=${`${id}-${field}-hint`}>${hint}</p>`}
      ${problem && html`<p class="field-error" id=${`${id}-${field}-error`}>${problem}</p>`}
    </div>`;
  };
  return html`<form class="subscription-form" onSubmit=${submit}>
    ${text('url', 'URL', url, setUrl, 'https, on port 443 or 80; the gateway refuses private and special-purpose addresses.')}
    <${EventTypePicker}
      id=${id}
      catalog=${catalog.data}
      value=${{ ...types, custom }}
      onChange=${setTypes}
      problem=${issueAt('event_types')}
    />
    <${ErrorNotice} error=${catalog.error} />
    ${text('description', 'Description', description, setDescription)}
    ${text('max_per_second', 'Attempts a second at most', perSecond, setPerSecond, '0.01 to 1000 (0.5: one every 2 s). Empty: no limit.', 'number')}
    ${text('max_in_flight', 'Attempts at the same time at most', inFlight, setInFlight, '1 to 100. Empty: the relay’s default, 10.', 'number')}
    <div class="field">
    <label class="check">
      <input type="checkbox" checked=${ordered} onChange=${(e: Event) => setOrdered((e.currentTarget as HTMLInputElement).checked)} />
      Ordered: the events of one reference in the payment service’s order
    </label>
    </div>
    ${issueAt('ordered') && html`<p class="field-error">${issueAt('ordered')}</p>`}
    <label class="check">
      <input type="checkbox" checked=${enabled} onChange=${(e: Event) => setEnabled((e.currentTarget as HTMLInputElement).checked)} />
      Enabled
    </label>
    ${issueAt('enabled') && html`<p class="field-error">${issueAt('enabled')}</p>`}
    <div class="actions">
      <button type="submit" class="primary" disabled=${busy}>${submitLabel}</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
    <${ErrorNotice} error=${error} shownAt=${FIELDS} />
  </form>`;
}
