import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';

/** Props of {@link ConfirmAction}. */
interface ConfirmActionProps {
  /** The button's text, e.g. `Delete`. */
  readonly label: string;
  /** The question asked once it is pressed. */
  readonly prompt: string;
  /** The confirming button's text, e.g. `Yes, delete`. */
  readonly confirmLabel: string;
  /** Runs the action; its failures are the caller's to show. */
  readonly onConfirm: () => Promise<void>;
}

/**
 * A button that asks before it acts: pressed, it shows the question with a confirming
 * button (focused, so Enter confirms and Tab reaches Cancel) and a Cancel button.
 */
export function ConfirmAction({ label, prompt, confirmLabel, onConfirm }: ConfirmActionProps) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${label}</button>`;
  }
  const run = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return html`<span class="confirm" role="group" aria-label=${prompt}>
    <span>${prompt}</span>
    <button type="button" class="danger solid" ref=${confirm} disabled=${busy} onClick=${run}>
      ${confirmLabel}
    </button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}
