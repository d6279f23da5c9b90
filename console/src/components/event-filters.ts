import { useState } from 'preact/hooks';
import type { EventQuery } from '../api.ts';
import { fromLocalInput, toLocalInput } from '../format.ts';
import { html } from '../html.ts';
import { hrefOf } from '../route.ts';
import { TimeField, timeFieldError } from './time-field.ts';

/**
 * The filters of the event list, as the query parameters of `GET /admin/events`. `reference`
 * (exact) is still read from a URL made before the prefix search; the form writes
 * `reference_prefix`.
 */
const FIELDS = [
  'event_type',
  'status',
  'outcome',
  'from',
  'to',
  'reference',
  'reference_prefix',
  'event_id_prefix',
] as const;

/** What the form edits: every filter but the exact `reference`, which it turns into a prefix. */
type FormField = Exclude<(typeof FIELDS)[number], 'reference'>;

/** The labels of the received-at range's fields (the field adds the time zone). */
const TIME_LABELS = { from: 'Received from', to: 'Received before' } as const;

/** The delivery outcomes an operator filters on, in the words of the page. */
const OUTCOMES: ReadonlyArray<readonly [value: string, label: string]> = [
  ['failed', 'failed (gave up)'],
  ['failing', 'failing (retrying)'],
  ['pending', 'pending (not attempted yet)'],
  ['delivered', 'delivered'],
  ['no_subscriber', 'no subscriber'],
  ['held', 'held for confirmation'],
];

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
 * The event list's filters: event type, confirmation status, delivery outcome, a received-at
 * range (typed in the chosen time zone, sent as UTC), and the start of the merchant reference
 * or of the event id (the API's prefix search, case-sensitive). Applying them writes them
 * into the URL, so the filtered list can be reloaded or shared.
 */
export function EventFilters({ filters, knownTypes }: EventFiltersProps) {
  const empty: Record<FormField, string> = {
    event_type: '',
    status: '',
    outcome: '',
    from: '',
    to: '',
    reference_prefix: '',
    event_id_prefix: '',
  };
  const [values, setValues] = useState<Record<FormField, string>>(() => ({
    event_type: filters.get('event_type') ?? '',
    status: filters.get('status') ?? '',
    outcome: filters.get('outcome') ?? '',
    from: toLocalInput(filters.get('from') ?? ''),
    to: toLocalInput(filters.get('to') ?? ''),
    reference_prefix: filters.get('reference_prefix') ?? filters.get('reference') ?? '',
    event_id_prefix: filters.get('event_id_prefix') ?? '',
  }));
  // Why a time field cannot be applied, shown beside it until its text changes.
  const [timeErrors, setTimeErrors] = useState<Record<'from' | 'to', string | null>>({
    from: null,
    to: null,
  });
  const set = (name: FormField) => (event: Event) => {
    setValues({ ...values, [name]: (event.currentTarget as HTMLInputElement).value });
    if (name === 'from' || name === 'to') setTimeErrors({ ...timeErrors, [name]: null });
  };
  const apply = (event: Event) => {
    event.preventDefault();
    const errors = {
      from: timeFieldError(TIME_LABELS.from, values.from),
      to: timeFieldError(TIME_LABELS.to, values.to),
    };
    setTimeErrors(errors);
    if (errors.from !== null || errors.to !== null) return;
    const query = new URLSearchParams();
    for (const name of Object.keys(empty) as FormField[]) {
      const raw = values[name].trim();
      const value = name === 'from' || name === 'to' ? (fromLocalInput(raw) ?? '') : raw;
      if (value !== '') query.set(name, value);
    }
    location.hash = hrefOf({ page: 'events', filters: query });
  };
  const clear = () => {
    setValues(empty);
    setTimeErrors({ from: null, to: null });
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
      <label for="filter-status">Confirmation</label>
      <select id="filter-status" value=${values.status} onChange=${set('status')}>
        <option value="">any</option>
        <option value="received">received (not checked)</option>
        <option value="awaiting_confirmation">awaiting confirmation</option>
        <option value="confirmed">confirmed</option>
        <option value="unconfirmed">unconfirmed</option>
      </select>
    </div>
    <div class="field">
      <label for="filter-outcome">Delivery</label>
      <select id="filter-outcome" value=${values.outcome} onChange=${set('outcome')}>
        <option value="">any</option>
        ${OUTCOMES.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
      </select>
    </div>
    <${TimeField}
      id="filter-from"
      label=${TIME_LABELS.from}
      value=${values.from}
      onInput=${set('from')}
      error=${timeErrors.from}
    />
    <${TimeField}
      id="filter-to"
      label=${TIME_LABELS.to}
      value=${values.to}
      onInput=${set('to')}
      error=${timeErrors.to}
    />
    <div class="field">
      <label for="filter-reference">Reference</label>
      <input
        id="filter-reference"
        type="search"
        value=${values.reference_prefix}
        onInput=${set('reference_prefix')}
        placeholder="starts with (case-sensitive)"
      />
    </div>
    <div class="field">
      <label for="filter-event-id">Event id</label>
      <input
        id="filter-event-id"
        type="search"
        value=${values.event_id_prefix}
        onInput=${set('event_id_prefix')}
        placeholder="starts with (case-sensitive)"
      />
    </div>
    <div class="actions">
      <button type="submit">Apply filters</button>
      <button type="button" onClick=${clear}>Clear</button>
    </div>
  </form>`;
}
