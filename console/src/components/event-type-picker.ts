import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import type { EventTypeInfo } from '../types.ts';

/** What the picker has chosen: `types` `null` for every type. */
export interface EventTypeChoice {
  readonly types: readonly string[] | null;
  /** The operator ticked "custom type": types the catalog does not list are meant. */
  readonly custom: boolean;
}

/** Props of {@link EventTypePicker}. */
interface EventTypePickerProps {
  /** Prefix of the controls' ids (the form's own id). */
  readonly id: string;
  /** `GET /admin/event-types`; `undefined` while it loads. */
  readonly catalog: readonly EventTypeInfo[] | undefined;
  readonly value: EventTypeChoice;
  readonly onChange: (choice: EventTypeChoice) => void;
  /** The API's word on `event_types` (an unknown type, with its closest known one). */
  readonly problem: string | undefined;
}

/** Who sends events of a type, in the operator's words. */
function originLabel(origin: EventTypeInfo['origin']): string {
  switch (origin) {
    case 'spec':
      return 'Payment service';
    case 'sandbox':
      return 'Payment service (sandbox)';
    case 'relay':
      return 'The relay’s own';
  }
}

/**
 * The event types a subscription receives, from the catalog: "Every event type", or a list
 * of checkboxes with each type's description (filtered by a search box). A type the
 * catalog does not list is typed into "Other type"; the gateway refuses it (naming the
 * closest known type) unless "custom type" is ticked, which sends `allow_custom_event_types`.
 */
export function EventTypePicker({ id, catalog, value, onChange, problem }: EventTypePickerProps) {
  const [search, setSearch] = useState('');
  const [other, setOther] = useState('');
  const selected = value.types ?? [];
  const known = new Set((catalog ?? []).map((entry) => entry.type));
  // Until the catalog is read, no chosen type can be told to be outside it.
  const extra = catalog === undefined ? [] : selected.filter((type) => !known.has(type));
  const toggle = (type: string, on: boolean) => {
    const types = on ? [...selected, type] : selected.filter((t) => t !== type);
    onChange({ ...value, types });
  };
  const addOther = () => {
    const type = other.trim();
    if (type !== '' && !selected.includes(type)) onChange({ ...value, types: [...selected, type] });
    setOther('');
  };
  const needle = search.trim().toLowerCase();
  const shown = (catalog ?? []).filter(
    (entry) =>
      needle === '' ||
      entry.type.toLowerCase().includes(needle) ||
      entry.description.toLowerCase().includes(needle),
  );
  const described = problem === undefined ? undefined : `${id}-types-error`;
  return html`<fieldset class="event-types" aria-describedby=${described}>
    <legend>Event types</legend>
    <label class="check">
      <input
        type="checkbox"
        checked=${value.types === null}
        onChange=${(e: Event) =>
          onChange({ ...value, types: (e.currentTarget as HTMLInputElement).checked ? null : [] })}
      />
      Every event type (the payment service’s; the relay’s own must be chosen)
    </label>
    ${
      value.types !== null &&
      html`<div class="field">
        <label for=${`${id}-type-search`}>Find a type</label>
        <input id=${`${id}-type-search`} type="search" value=${search}
          onInput=${(e: Event) => setSearch((e.currentTarget as HTMLInputElement).value)} />
      </div>
      ${catalog === undefined && html`<p class="hint">Loading the event types…</p>`}
      <ul class="type-list">
        ${shown.map(
          (entry) => html`<li key=${entry.type}>
            <label class="check">
              <input type="checkbox" checked=${selected.includes(entry.type)}
                onChange=${(e: Event) => toggle(entry.type, (e.currentTarget as HTMLInputElement).checked)} />
              <span><code>${entry.type}</code> <span class="hint">${originLabel(entry.origin)}: ${entry.description}</span></span>
            </label>
          </li>`,
        )}
        ${extra.map(
          (type) => html`<li key=${`extra-${type}`}>
            <label class="check">
              <input type="checkbox" checked onChange=${() => toggle(type, false)} />
              <span><code>${type}</code> <span class="hint">not in the catalog</span></span>
            </label>
          </li>`,
        )}
      </ul>
      <label for=${`${id}-other-type`}>Other type</label>
      <div class="field inline">
          <input id=${`${id}-other-type`} value=${other}
            onInput=${(e: Event) => setOther((e.currentTarget as HTMLInputElement).value)}
            onKeyDown=${(e: KeyboardEvent) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                addOther();
              }
            }} />
          <button type="button" onClick=${addOther}>Add type</button>
      </div>
      <label class="check">
        <input type="checkbox" checked=${value.custom}
          onChange=${(e: Event) => onChange({ ...value, custom: (e.currentTarget as HTMLInputElement).checked })} />
        Custom type: accept types the catalog does not list (a newer payment service, a test type)
      </label>`
    }
    ${problem && html`<p class="field-error" id=${described}>${problem}</p>`}
  </fieldset>`;
}
