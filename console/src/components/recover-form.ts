import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { formatCount, fromLocalInput } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { html } from '../html.ts';
import type { RecoveryJob, RecoveryPreview, RecoveryRequest } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';
import { TimeField, timeFieldError } from './time-field.ts';

/** The form's fields as typed; times in the chosen time zone, '' for none. */
interface RecoveryFields {
  since: string;
  until: string;
  subscription_id: string;
  status: '' | 'failed' | 'pending';
  event_type: string;
  operator: string;
}

const EMPTY: RecoveryFields = {
  since: '',
  until: '',
  subscription_id: '',
  status: 'failed',
  event_type: '',
  operator: '',
};

/** The labels of the time fields (the field adds the time zone). */
const TIME_LABELS = { since: 'Created from', until: 'Created before' } as const;

/** Why each time field cannot be sent, `null` where it can. */
type TimeErrors = Record<keyof typeof TIME_LABELS, string | null>;

const NO_TIME_ERRORS: TimeErrors = { since: null, until: null };

function timeErrorsOf(fields: RecoveryFields): TimeErrors {
  return {
    since: timeFieldError(TIME_LABELS.since, fields.since),
    until: timeFieldError(TIME_LABELS.until, fields.until),
  };
}

/**
 * The request body of the fields: times as ISO 8601 UTC, empty fields left out. Only for
 * fields whose times read ({@link timeErrorsOf} found nothing).
 */
function requestOf(fields: RecoveryFields): RecoveryRequest {
  const body: RecoveryRequest = { since: fromLocalInput(fields.since) ?? '' };
  const until = fromLocalInput(fields.until) ?? '';
  if (until !== '') body.until = until;
  if (fields.subscription_id !== '') body.subscription_id = fields.subscription_id;
  if (fields.status !== '') body.status = fields.status;
  if (fields.event_type !== '') body.event_type = fields.event_type;
  if (fields.operator.trim() !== '') body.operator = fields.operator.trim();
  return body;
}

/**
 * How many deliveries a preview found, in words: `3 deliveries match`, or `10,000+
 * deliveries match` when the API stopped counting (the count is then a lower bound).
 *
 * @param preview - the preview's answer.
 * @internal Exported for its test, which checks the wording without a browser.
 */
export function matchedWords(preview: RecoveryPreview): string {
  const count = `${formatCount(preview.matched)}${preview.capped ? '+' : ''}`;
  return `${count} ${preview.matched === 1 && !preview.capped ? 'delivery matches' : 'deliveries match'}`;
}

/** Props of {@link RecoverForm}. */
interface RecoverFormProps {
  readonly api: AdminApi;
  /** Called with the job once the gateway has started it (or answered the running one). */
  readonly onStarted: (job: RecoveryJob) => void;
}

/**
 * Bulk recovery of undelivered deliveries by filter: created since (required) and before,
 * one subscription, failed or pending or both, one event type. Preview counts what the filter
 * matches now, and how many of those a job would skip (their subscription is disabled or
 * deleted); only then can the operator start the job. Changing a field clears the preview,
 * so what is started is always what was counted.
 */
export function RecoverForm({ api, onStarted }: RecoverFormProps) {
  const [fields, setFields] = useState<RecoveryFields>(EMPTY);
  const [preview, setPreview] = useState<RecoveryPreview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [timeErrors, setTimeErrors] = useState<TimeErrors>(NO_TIME_ERRORS);
  const subscriptions = useLoad(() => api.listSubscriptions(), []);
  const eventTypes = useLoad(() => api.listEventTypes(), []);
  const set = (name: keyof RecoveryFields) => (event: Event) => {
    setFields({ ...fields, [name]: (event.currentTarget as HTMLInputElement).value });
    setPreview(null);
    if (name in timeErrors) setTimeErrors({ ...timeErrors, [name]: null });
  };
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const previewNow = (event: Event) => {
    event.preventDefault();
    const errors = timeErrorsOf(fields);
    setTimeErrors(errors);
    // Nothing is sent while a time field holds text that is not a time.
    if (errors.since !== null || errors.until !== null) return;
    void run(async () => setPreview(await api.previewRecovery(requestOf(fields))));
  };
  const start = () =>
    run(async () => {
      onStarted(await api.startRecovery(requestOf(fields)));
      setPreview(null);
    });
  return html`<form class="filters" onSubmit=${previewNow} aria-labelledby="recover-heading">
    <${TimeField}
      id="recover-since"
      label=${TIME_LABELS.since}
      value=${fields.since}
      onInput=${set('since')}
      error=${timeErrors.since}
      required
    />
    <${TimeField}
      id="recover-until"
      label=${TIME_LABELS.until}
      value=${fields.until}
      onInput=${set('until')}
      error=${timeErrors.until}
    />
    <div class="field">
      <label for="recover-subscription">Subscription</label>
      <select id="recover-subscription" value=${fields.subscription_id} onChange=${set('subscription_id')}>
        <option value="">any</option>
        ${(subscriptions.data ?? []).map(
          (s) => html`<option value=${s.id}>${s.url}${s.enabled ? '' : ' (disabled)'}</option>`,
        )}
      </select>
    </div>
    <div class="field">
      <label for="recover-status">Deliveries</label>
      <select id="recover-status" value=${fields.status} onChange=${set('status')}>
        <option value="failed">failed</option>
        <option value="pending">pending (waiting for a retry)</option>
        <option value="">failed and pending</option>
      </select>
    </div>
    <div class="field">
      <label for="recover-type">Event type</label>
      <select id="recover-type" value=${fields.event_type} onChange=${set('event_type')}>
        <option value="">any</option>
        ${(eventTypes.data ?? []).map((t) => html`<option value=${t.type}>${t.type}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="recover-operator">Your name (recorded with the recovery)</label>
      <input id="recover-operator" maxlength="100" value=${fields.operator} onInput=${set('operator')} />
    </div>
    <div class="actions">
      <button type="submit" disabled=${busy}>Preview</button>
      ${
        preview !== null &&
        html`<p role="status" class="recover-preview">
          ${matchedWords(preview)}${
            preview.skipped_disabled > 0
              ? `; ${formatCount(preview.skipped_disabled)} of them would be skipped (subscription disabled or deleted)`
              : ''
          }.
        </p>
        <button type="button" class="primary" disabled=${busy || preview.matched === 0} onClick=${start}>
          Start recovery
        </button>`
      }
    </div>
    <${ErrorNotice} error=${error ?? subscriptions.error ?? eventTypes.error} />
  </form>`;
}
