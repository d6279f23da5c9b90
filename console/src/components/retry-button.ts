import { useState } from 'preact/hooks';
import type { AdminApi } from '../api.ts';
import { html } from '../html.ts';
import { ErrorNotice } from './error-notice.ts';

/** Props of {@link RetryButton}. */
interface RetryButtonProps {
  readonly api: AdminApi;
  readonly deliveryId: string;
  /** The button's text. */
  readonly label: string;
  /** Called once the gateway has queued the delivery again. */
  readonly onRetried: () => void;
}

/**
 * Retries one delivery now (`POST /admin/deliveries/:id/retry`: pending, due now, its
 * attempts kept), showing the API's message if it refuses.
 */
export function RetryButton({ api, deliveryId, label, onRetried }: RetryButtonProps) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const retry = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.retryDelivery(deliveryId);
      onRetried();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" disabled=${busy} onClick=${retry} aria-describedby=${`delivery-${deliveryId}`}>${label}</button>
    <${ErrorNotice} error=${error} />`;
}
