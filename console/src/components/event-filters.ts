import { useState } from 'preact/hooks';
import type { EventQuery } from '../api.ts';
import { fromLocalInput, toLocalInput } from '../format.ts';
import { html } from '../html.ts';
import { hrefOf } from '../route.ts';

/** The filters of the event list, as the query parameters of `GET /admin/events`. */
const FIELDS = ['event_type', 'status', 'from', 'to', 'reference'] as const;

/**
 * The event list's filters found in the URL, and nothing else: the API refuses a query
 * parameter it does not know.
 *
 * @param filters - the URL's query parameters.
 */
export function eventQueryOf(filters: URLSearchParams): EventQuery {
  const query: EventQuery = {};
  for (const name of FIELDS) {
    const value = filters.get(name);
    if (value !== null && value !== '') query[name] = value;
  }
  return query;
}

/** Props of {@link EventFilters}. */
interface EventFiltersProps {
  /** The filters in force (the URL's). */
  readonly filters: URLSearchParams;
  /** Event types to suggest: those seen so far. */
  readonly knownTypes: readonly string[];
}

/**
 * The event list's filters: event type, confirmation status, a received-at range (local
 * time, sent as UTC) and the exact merchant reference. Applying them writes them into the
 * URL, so the filtered list can be reloaded or shared.
 */
export function EventFilters({ filters, knownTypes }: EventFiltersProps) {
  const [values, setValues] = useState(() => ({
    event_type: filters.get('event_type') ?? '',
    status: filters.get('status') ?? '',
    from: toLocalInput(filters.get('from') ?? ''),
    to: toLocalInput(filters.get('to') ?? ''),
    reference: filters.get('reference') ?? '',
  }));
  const set = (name: keyof typeof values) => (event: Event) =>
    setValues({ ...values, [name]: (event.currentTarget as HTMLInputElement).value });
  const apply = (event: Event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const name of FIELDS) {
      const raw = values[name].trim();
      const value = name === 'from' || name === 'to' ? fromLocalInput(raw) : raw;
      if (value !== '') query.set(name, value);
    }
    location.hash = hrefOf({ page: 'events', filters: query });
  };
  const clear = () => {
    setValues({ event_type: '', status: '', from: '', to: '', reference: '' });
    location.hash = hrefOf({ page: 'events', filters: new URLSearchParams() });
  };
  return html`<form class="filters" onSubmit=${apply} aria-label="Filter events">
    <div class="field">
      <label for="filter-type">Event type</label>
      <input
        id="filter-type"
        list="known-event-types"
        value=${values.event_type}
        onInput=${set('event_type')}
        placeholder="any"
      />
      <datalist id="known-event-types">
        ${knownTypes.map((type) => html`<option value=${type} />`)}
      </datalist>
    </div>
    <div class="field">
      <label for="filter-status">Status</label>
      <select id="filter-status" value=${values.status} onChange=${set('status')}>
        <option value="">any</option>
        <option value="received">received (not checked)</option>
        <option value="awaiting_confirmation">awaiting confirmation</option>
        <option value="confirmed">confirmed</option>
        <option value="unconfirmed">unconfirmed</option>
      </select>
    </div>
    <div class="field">
      <label for="filter-from">Received from</label>
      <input id="filter-from" type="datetime-local" value=${values.from} onInput=${set('from')} />
    </div>
    <div class="field">
      <label for="filter-to">Received before</label>
      <input id="filter-to" type="datetime-local" value=${values.to} onInput=${set('to')} />
    </div>
    <div class="field">
      <label for="filter-reference">Reference</label>
      <input
        id="filter-reference"
        type="search"
        value=${values.reference}
        onInput=${set('reference')}
        placeholder="exact merchant reference"
      />
    </div>
    <div class="actions">
      <button type="submit">Apply filters</button>
      <button type="button" onClick=${clear}>Clear</button>
    </div>
  </form>`;
}
