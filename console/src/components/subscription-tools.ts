import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { formatCount } from '../format.ts';
import { html } from '../html.ts';
import { hrefOf } from '../route.ts';
import type { Subscription, TestEventSent } from '../types.ts';
import { ErrorNotice } from './error-notice.ts';

/** Props of {@link ReEnable} and {@link SendTestEvent}. */
interface ToolProps {
  readonly api: AdminApi;
  readonly subscription: Subscription;
  /** Called after the action changed something, so the list is read again. */
  readonly onChanged: () => void;
}

/**
 * Re-enables a disabled subscription, with the choice to re-queue what waited for it (its
 * pending deliveries and those failed since it began failing); `onReEnabled` is told how
 * many were re-queued, in words (this control goes away once the subscription is enabled).
 */
export function ReEnable({
  api,
  subscription,
  onChanged,
  onReEnabled,
}: ToolProps & { readonly onReEnabled: (words: string) => void }) {
  const [requeue, setRequeue] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api.updateSubscription(subscription.id, {
        enabled: true,
        requeue_pending: requeue,
      });
      const requeued = answer.requeued ?? 0;
      const missed = answer.missed_events ?? { count: 0, capped: false };
      const events = `${formatCount(missed.count)}${missed.capped ? '+' : ''} ${missed.count === 1 ? 'event' : 'events'} that arrived while it was disabled`;
      const deliveries = `${formatCount(requeued)} ${requeued === 1 ? 'delivery' : 'deliveries'} re-queued`;
      let words = requeue ? `Re-enabled; ${deliveries}.` : 'Re-enabled; nothing re-queued.';
      if (missed.count > 0) {
        words += requeue
          ? ` The ${events} are being delivered by a recovery job (Deliveries page).`
          : ` The ${events} were not delivered to it.`;
      }
      onReEnabled(words);
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="re-enable">
    <label class="check">
      <input type="checkbox" checked=${requeue} onChange=${(e: Event) => setRequeue((e.currentTarget as HTMLInputElement).checked)} />
      Re-queue what is pending for it
    </label>
    <button type="button" class="primary" disabled=${busy} onClick=${run}>Re-enable</button>
    <${ErrorNotice} error=${error} />
  </div>`;
}

/**
 * Sends a signed test event to this subscription only and links to the event's page, where
 * its delivery and attempts are shown.
 */
export function SendTestEvent({ api, subscription, onChanged }: ToolProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<TestEventSent | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setSent(await api.sendTestEvent(subscription.id));
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" disabled=${busy} onClick=${run}>Send test event</button>
    ${
      sent !== null &&
      html`<p role="status" class="test-sent">
        Test event sent:
        <a class="id" href=${hrefOf({ page: 'event', id: sent.event_id })}>${sent.event_id}</a>
      </p>`
    }
    <${ErrorNotice} error=${error} />`;
}
