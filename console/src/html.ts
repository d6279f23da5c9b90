import htm from 'htm';
import { h } from 'preact';

/**
 * Preact elements written as tagged templates, so the console needs no JSX step:
 * `` html`<p class="note">${text}</p>` ``. Interpolated text is escaped by Preact.
 */
export const html = htm.bind(h);
