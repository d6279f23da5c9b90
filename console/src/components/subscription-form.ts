import { useId, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import { parseEventTypes } from '../format.ts';
import { html } from '../html.ts';
import type { Subscription, SubscriptionInput } from '../types.ts';
import { ErrorNotice, fieldOf } from './error-notice.ts';

/** The fields the form edits; an issue at any other path is listed under the form. */
const FIELDS = ['url', 'event_types', 'description', 'enabled'] as const;

/** Props of {@link SubscriptionForm}. */
interface SubscriptionFormProps {
  /** The subscription being edited; absent to create one. */
  readonly initial?: Subscription;
  readonly submitLabel: string;
  /** Sends the fields; an ApiError it throws is shown, its issues beside their fields. */
  readonly onSubmit: (input: SubscriptionInput) => Promise<void>;
  readonly onCancel: () => void;
}

/**
 * The fields of a subscription: URL, event types (comma-separated; empty for every type),
 * description and the enabled flag. The gateway judges the URL (https, no private or
 * special-purpose address, allowed ports): its message is shown under the field.
 */
export function SubscriptionForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: SubscriptionFormProps) {
  const id = useId();
  const [url, setUrl] = useState(initial?.url ?? '');
  const [types, setTypes] = useState(initial?.event_types?.join(', ') ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const issues = error instanceof ApiError ? error.issues : [];
  const issueAt = (field: string) => issues.find((issue) => fieldOf(issue) === field)?.message;
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit({
        url: url.trim(),
        event_types: parseEventTypes(types),
        description: description.trim() === '' ? null : description.trim(),
        enabled,
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
        onInput=${(e: Event) => set((e.currentTarget as HTMLInputElement).value)}
        aria-invalid=${problem === undefined ? undefined : 'true'}
        aria-describedby=${described === '' ? undefined : described}
        inputmode=${field === 'url' ? 'url' : undefined}
        required=${field === 'url'}
      />
      ${hint && html`<p class="hint" id=${`${id}-${field}-hint`}>${hint}</p>`}
      ${problem && html`<p class="field-error" id=${`${id}-${field}-error`}>${problem}</p>`}
    </div>`;
  };
  return html`<form class="subscription-form" onSubmit=${submit}>
    ${text('url', 'URL', url, setUrl, 'https, on port 443 or 80; the gateway refuses private and special-purpose addresses.')}
    ${text('event_types', 'Event types', types, setTypes, 'Comma-separated, e.g. charge_success, disbursement_success. Empty: every event type.')}
    ${text('description', 'Description', description, setDescription)}
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
