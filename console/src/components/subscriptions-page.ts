import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { formatTime } from '../format.ts';
import { useInterval, useLoad } from '../hooks.ts';
import { html } from '../html.ts';
import type { Subscription } from '../types.ts';
import { ConfirmAction } from './confirm-action.ts';
import { ErrorNotice } from './error-notice.ts';
import { SecretNotice } from './secret-notice.ts';
import { SubscriptionForm } from './subscription-form.ts';
import { HealthFacts, LimitFacts } from './subscription-health.ts';
import { ReEnable, SendTestEvent } from './subscription-tools.ts';

type WithSecret = Subscription & { secret: string };

/** How often the list is read again while no form is open, so health changes show, in ms. */
const LIVE_REFRESH_MS = 10_000;

/**
 * The webhook subscriptions: create one (its secret shown once), and for each: its health
 * (state, reason, since when, success rate), limits and ordering; edit, send a test event,
 * re-enable (re-queueing on request), rotate the secret (shown once), delete (after a
 * confirmation). The list is read again every 10 s while no subscription is being created.
 */
export function SubscriptionsPage({ api }: { api: AdminApi }) {
  const list = useLoad(() => api.listSubscriptions(), []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<WithSecret | null>(null);
  const [error, setError] = useState<unknown>(null);
  useInterval(list.reload, creating ? null : LIVE_REFRESH_MS);
  const showSecret = (answer: Subscription) => {
    if (answer.secret !== undefined) setSecret({ ...answer, secret: answer.secret });
    list.reload();
  };
  const create = async (input: Parameters<AdminApi['createSubscription']>[0]) => {
    showSecret(await api.createSubscription(input));
    setCreating(false);
  };
  const subscriptions = list.data ?? [];
  return html`<h1 tabindex="-1">Subscriptions</h1>
    ${secret !== null && html`<${SecretNotice} subscription=${secret} onDone=${() => setSecret(null)} />`}
    ${
      creating
        ? html`<section aria-labelledby="new-subscription-heading" class="panel">
          <h2 id="new-subscription-heading">New subscription</h2>
          <${SubscriptionForm} api=${api} submitLabel="Create subscription" onSubmit=${create} onCancel=${() => setCreating(false)} />
        </section>`
        : html`<button type="button" class="primary" onClick=${() => setCreating(true)}>New subscription</button>`
    }
    <${ErrorNotice} error=${list.error} />
    <${ErrorNotice} error=${error} />
    ${list.data !== undefined && subscriptions.length === 0 && html`<p class="empty">No subscription yet.</p>`}
    <ul class="subscriptions">
      ${subscriptions.map(
        (subscription) => html`<${SubscriptionItem}
          key=${subscription.id}
          api=${api}
          subscription=${subscription}
          onChanged=${list.reload}
          onSecret=${showSecret}
          onError=${setError}
        />`,
      )}
    </ul>`;
}

interface SubscriptionItemProps {
  api: AdminApi;
  subscription: Subscription;
  onChanged: () => void;
  onSecret: (answer: Subscription) => void;
  onError: (error: unknown) => void;
}

function SubscriptionItem({
  api,
  subscription,
  onChanged,
  onSecret,
  onError,
}: SubscriptionItemProps) {
  const [editing, setEditing] = useState(false);
  const [reEnabled, setReEnabled] = useState<string | null>(null);
  const act = (action: () => Promise<void>) => async () => {
    onError(null);
    try {
      await action();
    } catch (failure) {
      onError(failure);
    }
  };
  const save = async (input: Parameters<AdminApi['updateSubscription']>[1]) => {
    await api.updateSubscription(subscription.id, input);
    setEditing(false);
    onChanged();
  };
  const label = subscription.description ?? subscription.url;
  return html`<li class="panel subscription" aria-label=${`Subscription ${label}`}>
    ${
      editing
        ? html`<h2 class="url">Edit ${subscription.url}</h2>
          <${SubscriptionForm} api=${api} initial=${subscription} submitLabel="Save" onSubmit=${save} onCancel=${() => setEditing(false)} />`
        : html`<h2 class="url">${subscription.url}</h2>
          <dl class="facts">
            <dt>Description</dt><dd>${subscription.description ?? '—'}</dd>
            <${HealthFacts} health=${subscription.health} />
            <dt>Event types</dt><dd>${subscription.event_types?.join(', ') ?? 'every event type'}</dd>
            <${LimitFacts} subscription=${subscription} />
            <dt>Id</dt><dd><code>${subscription.id}</code></dd>
            <dt>Created</dt><dd>${formatTime(subscription.created_at)}</dd>
            ${
              subscription.previous_secret_expires_at !== null &&
              html`<dt>Previous secret</dt><dd>still signs until ${formatTime(subscription.previous_secret_expires_at)}</dd>`
            }
          </dl>
          ${!subscription.enabled && html`<${ReEnable} api=${api} subscription=${subscription} onChanged=${onChanged} onReEnabled=${setReEnabled} />`}
          ${reEnabled !== null && html`<p role="status">${reEnabled}</p>`}
          <div class="actions">
            <button type="button" onClick=${() => setEditing(true)}>Edit</button>
            ${subscription.enabled && html`<${SendTestEvent} api=${api} subscription=${subscription} onChanged=${onChanged} />`}
            <${ConfirmAction}
              label="Rotate secret"
              prompt="Make a new secret? The current one keeps signing for 24 h."
              confirmLabel="Yes, rotate"
              onConfirm=${act(async () => onSecret(await api.rotateSecret(subscription.id)))}
            />
            <${ConfirmAction}
              label="Delete"
              prompt="Delete this subscription? Nothing more is delivered to it."
              confirmLabel="Yes, delete"
              onConfirm=${act(async () => {
                await api.deleteSubscription(subscription.id);
                onChanged();
              })}
            />
          </div>`
    }
  </li>`;
}
