import { useEffect, useRef, useState } from 'preact/hooks';
import { AdminApi } from '../api.ts';
import { html } from '../html.ts';
import { ErrorNotice } from './error-notice.ts';

/** Props of {@link SignIn}. */
interface SignInProps {
  /** Called with a token the admin API accepted. */
  readonly onSignedIn: (token: string) => void;
  /** Why the operator is here (signed out, or the token was refused), if anything. */
  readonly notice: string | null;
}

/**
 * The sign-in form: the admin token is checked with one admin API call
 * (`GET /admin/deliveries/counts`) before it is kept, so a wrong token is refused here
 * with the API's message.
 */
export function SignIn({ onSignedIn, notice }: SignInProps) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    setBusy(true);
    setError(null);
    try {
      await new AdminApi(candidate).countDeliveries();
      onSignedIn(candidate);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return html`<main id="main" class="sign-in">
    <h1>edgepay console</h1>
    ${notice !== null && html`<p class="notice" role="status">${notice}</p>`}
    <form onSubmit=${submit}>
      <label for="admin-token">Admin token</label>
      <input
        id="admin-token"
        ref=${field}
        type="password"
        autocomplete="off"
        spellcheck=${false}
        required
        value=${token}
        onInput=${(e: Event) => setToken((e.currentTarget as HTMLInputElement).value)}
      />
      <p class="hint">
        The gateway's <code>ADMIN_TOKEN</code>. It is kept in this tab's session storage only
        and sent as a bearer token to the admin API.
      </p>
      <button type="submit" class="primary" disabled=${busy || token.trim() === ''}>Sign in</button>
    </form>
    <${ErrorNotice} error=${error} />
  </main>`;
}
