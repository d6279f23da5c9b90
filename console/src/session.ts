// The admin token lives in sessionStorage only: gone when the tab closes, never in
// localStorage, a cookie or the URL.

const TOKEN_KEY = 'edgepay.console.admin-token';

/** The admin token of this tab's session, or `null` when signed out. */
export function readToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * Keeps the admin token for this tab's session.
 *
 * @param token - the admin token the API accepted.
 */
export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Forgets the admin token (sign-out). */
export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}
