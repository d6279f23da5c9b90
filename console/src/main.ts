// Entry point of the operator console, served by the gateway at /console/.
import { render } from 'preact';
import { App } from './app.ts';
import { html } from './html.ts';

const root = document.getElementById('app');
if (root !== null) {
  root.replaceChildren();
  render(html`<${App} />`, root);
}
