import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';
import type { Subscription } from '../types.ts';

/** Props of {@link SecretNotice}. */
interface SecretNoticeProps {
  /** The answer of create or rotate, which alone carries the secret. */
  readonly subscription: Subscription & { secret: string };
  /** Hides the secret for good. */
  readonly onDone: () => void;
}

/**
 * The signing secret of a subscription just created or rotated, shown this once: the API
 * never returns it again. A copy button, a warning, and a button to dismiss it.
 */
export function SecretNotice({ subscription, onDone }: SecretNoticeProps) {
  const [copied, setCopied] = useState<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(subscription.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied(
        'The browser refused the clipboard: the secret is selected, copy it with the keyboard.',
      );
    }
  };
  return html`<section class="notice warning secret" aria-labelledby="secret-heading">
    <h2 id="secret-heading">Signing secret for ${subscription.url}</h2>
    <p>
      <strong>Copy it now: it is shown only this once.</strong> The subscriber verifies
      deliveries with it (Standard Webhooks). Lost, it can only be replaced by rotating it.
    </p>
    <label for="new-secret">Secret</label>
    <div class="secret-row">
      <input id="new-secret" ref=${field} readonly value=${subscription.secret} spellcheck=${false} onFocus=${(e: Event) => (e.currentTarget as HTMLInputElement).select()} />
      <button type="button" onClick=${copy}>Copy</button>
    </div>
    ${copied !== null && html`<p role="status">${copied}</p>`}
    <button type="button" onClick=${onDone}>I have stored it</button>
  </section>`;
}
