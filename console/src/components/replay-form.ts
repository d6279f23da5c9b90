import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { html } from '../html.ts';
import type { EventDetail, ReplayRequest, Subscription } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';

/** Props of {@link ReplayForm}. */
interface ReplayFormProps {
  readonly api: AdminApi;
  readonly event: EventDetail;
  readonly subscriptions: readonly Subscription[];
  /** Called after the replay was queued, to reload the event. */
  readonly onReplayed: () => void;
}

/**
 * Replays an event to every matching enabled subscription or to one. An event the payment
 * service has not confirmed (unconfirmed, or still awaiting confirmation) is replayed only
 * once the operator ticks the force box: the request then carries `force: true` and the
 * operator's name.
 */
export function ReplayForm({ api, event, subscriptions, onReplayed }: ReplayFormProps) {
  const [target, setTarget] = useState('');
  const [force, setForce] = useState(false);
  const [operator, setOperator] = useState('');
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const unconfirmed = event.status === 'unconfirmed' || event.status === 'awaiting_confirmation';
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: ReplayRequest = {};
    if (target !== '') body.subscription_id = target;
    if (unconfirmed) {
      body.force = force;
      if (operator.trim() !== '') body.operator = operator.trim();
    }
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      const { delivery_ids } = await api.replayEvent(event.event_id, body);
      setOutcome(
        `Replay queued: ${delivery_ids.length} ${delivery_ids.length === 1 ? 'delivery' : 'deliveries'}.`,
      );
      onReplayed();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const enabled = subscriptions.filter((subscription) => subscription.enabled);
  return html`<form class="replay" onSubmit=${submit} aria-labelledby="replay-heading">
    <h2 id="replay-heading">Replay</h2>
    <div class="field">
      <label for="replay-target">Deliver to</label>
      <select id="replay-target" value=${target} onChange=${(e: Event) => setTarget((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">every matching enabled subscription</option>
        ${enabled.map(
          (s) =>
            html`<option value=${s.id}>${s.url}${s.description ? ` (${s.description})` : ''}</option>`,
        )}
      </select>
    </div>
    ${
      unconfirmed &&
      html`<div class="notice warning">
      <p>
        The payment service has not confirmed this event. Delivering it may make a subscriber
        ship goods or credit money that never arrived.
      </p>
      <label class="check">
        <input type="checkbox" checked=${force} onChange=${(e: Event) => setForce((e.currentTarget as HTMLInputElement).checked)} />
        Replay anyway (force); the gateway records who, from where and when
      </label>
      <div class="field">
        <label for="replay-operator">Your name (recorded with the forced replay)</label>
        <input id="replay-operator" maxlength="100" value=${operator} onInput=${(e: Event) => setOperator((e.currentTarget as HTMLInputElement).value)} />
      </div>
    </div>`
    }
    <button type="submit" class=${unconfirmed ? 'danger solid' : 'primary'} disabled=${busy || (unconfirmed && !force)}>Replay</button>
    ${outcome !== null && html`<p class="notice success" role="status">${outcome}</p>`}
    <${ErrorNotice} error=${error} />
  </form>`;
}
