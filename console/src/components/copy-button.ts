import { useState } from 'preact/hooks';
import { html } from '../html.ts';

/** Props of {@link CopyButton}. */
interface CopyButtonProps {
  /** The text put on the clipboard, e.g. an event id. */
  readonly value: string;
  /** What it copies, completing the button's accessible name: `event id` gives `Copy event id`. */
  readonly label: string;
}

/**
 * A small button that copies an id to the clipboard and says so ("Copied") for a moment; when
 * the browser refuses the clipboard it says that instead, so nothing fails silently.
 */
export function CopyButton({ value, label }: CopyButtonProps) {
  const [said, setSaid] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setSaid('Copied');
    } catch {
      setSaid('Copy refused by the browser');
    }
    setTimeout(() => setSaid(null), 2000);
  };
  // The word changes in place ("Copied"); aria-live has it read out.
  return html`<button type="button" class="copy" aria-live="polite" onClick=${copy}>${said ?? 'Copy'}<span class="visually-hidden"> ${label}</span></button>`;
}
