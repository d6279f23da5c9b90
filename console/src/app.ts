import { Component, type ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AdminApi } from './api.ts';
import { DeliveriesPage } from './components/deliveries-page.ts';
import { ErrorNotice } from './components/error-notice.ts';
import { EventPage } from './components/event-page.ts';
import { EventsPage } from './components/events-page.ts';
import { SignIn } from './components/sign-in.ts';
import { SubscriptionsPage } from './components/subscriptions-page.ts';
import { chooseTimeZone, localZoneName, type TimeZoneChoice, timeZoneChoice } from './format.ts';
import { html } from './html.ts';
import { hrefOf, type Route, useRoute } from './route.ts';
import { clearToken, readToken, saveToken } from './session.ts';

/**
 * The console: the sign-in form until an admin token is accepted, then the page the URL
 * names under a header with the navigation and the sign-out button. A 401 from any call
 * (the token was changed on the gateway) signs out with the API's message.
 */
export function App() {
  const [token, setToken] = useState(readToken);
  const [notice, setNotice] = useState<string | null>(null);
  const api = useMemo(
    () =>
      token === null
        ? null
        : new AdminApi(token, (error) => {
            clearToken();
            setToken(null);
            setNotice(`Signed out: ${error.message}`);
          }),
    [token],
  );
  if (api === null) {
    const signIn = (accepted: string) => {
      saveToken(accepted);
      setNotice(null);
      setToken(accepted);
    };
    return html`<${SignIn} onSignedIn=${signIn} notice=${notice} />`;
  }
  const signOut = () => {
    clearToken();
    setToken(null);
    setNotice('Signed out. The admin token was removed from this tab.');
  };
  return html`<${Shell} api=${api} onSignOut=${signOut} />`;
}

const NAV = [
  { page: 'events', label: 'Events' },
  { page: 'subscriptions', label: 'Subscriptions' },
  { page: 'deliveries', label: 'Deliveries' },
] as const;

function Shell({ api, onSignOut }: { api: AdminApi; onSignOut: () => void }) {
  const route = useRoute();
  const [zone, setZone] = useState(timeZoneChoice);
  const changeZone = (choice: TimeZoneChoice) => {
    chooseTimeZone(choice);
    // The whole page renders again, so every time on it follows.
    setZone(choice);
  };
  const main = useRef<HTMLElement>(null);
  const current = route.page === 'event' ? 'events' : route.page;
  // After a change of page, focus moves to the new page's heading for keyboard and
  // screen reader users (the first render keeps the browser's own focus).
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [hrefOf(route)]);
  return html`<a class="skip" href="#main" onClick=${skipToMain}>Skip to content</a>
    <header class="top">
      <span class="brand">edgepay console</span>
      <nav aria-label="Pages">
        ${NAV.map(
          (item) =>
            html`<a
              href=${`#/${item.page}`}
              aria-current=${item.page === current ? 'page' : undefined}
              >${item.label}</a
            >`,
        )}
      </nav>
      <${ZoneSelect} zone=${zone} onChange=${changeZone} />
      <button type="button" class="sign-out" onClick=${onSignOut}>Sign out</button>
    </header>
    <main id="main" ref=${main}>
      <${Boundary} key=${hrefOf(route)}>${page(route, api)}<//>
    </main>`;
}

/** The time zone every time is written in: UTC unless the operator picks local time. */
function ZoneSelect({
  zone,
  onChange,
}: {
  zone: TimeZoneChoice;
  onChange: (choice: TimeZoneChoice) => void;
}) {
  return html`<span class="zone">
    <label for="time-zone">Times in</label>
    <select
      id="time-zone"
      value=${zone}
      onChange=${(event: Event) =>
        onChange((event.currentTarget as HTMLSelectElement).value === 'local' ? 'local' : 'utc')}
    >
      <option value="utc">UTC</option>
      <option value="local">local time (${localZoneName() ?? 'browser'})</option>
    </select>
  </span>`;
}

// The skip link must not change the fragment, which names the page.
function skipToMain(event: Event): void {
  event.preventDefault();
  document.querySelector<HTMLElement>('main h1')?.focus();
}

function page(route: Route, api: AdminApi) {
  switch (route.page) {
    case 'event':
      return html`<${EventPage} api=${api} id=${route.id} />`;
    case 'subscriptions':
      return html`<${SubscriptionsPage} api=${api} />`;
    case 'deliveries':
      return html`<${DeliveriesPage} api=${api} />`;
    case 'invalid':
      return html`<h1 tabindex="-1">No such page</h1>
        <p role="alert">
          The link <code>${route.fragment}</code> names no page of the console: its event id is
          not valid percent-encoding.
        </p>
        <p><a href="#/events">Back to the events</a></p>`;
    default:
      return html`<${EventsPage} api=${api} filters=${route.filters} />`;
  }
}

/** Shows a page's rendering failure in the page instead of a blank one. */
class Boundary extends Component<{ children?: ComponentChildren }, { error: unknown }> {
  override state = { error: undefined as unknown };

  static override getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override render() {
    if (this.state.error === undefined) return this.props.children;
    return html`<h1 tabindex="-1">Something went wrong</h1>
      <${ErrorNotice} error=${this.state.error} />
      <p><a href="#/events">Back to the events</a></p>`;
  }
}
