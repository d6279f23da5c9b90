// The console's pages live in the URL's fragment (`/console/#/events/<id>`): the gateway
// serves one HTML file, and a reload or a shared link opens the same page.
import { useEffect, useState } from 'preact/hooks';

/** A page of the console and what it shows. */
export type Route =
  | { readonly page: 'events'; readonly filters: URLSearchParams }
  | { readonly page: 'event'; readonly id: string }
  | { readonly page: 'subscriptions' }
  | { readonly page: 'deliveries' }
  /** A fragment that names no page (e.g. an event id that is not valid percent-encoding). */
  | { readonly page: 'invalid'; readonly fragment: string };

/**
 * The page a fragment names; anything unknown is the event list, and an event link whose id
 * cannot be decoded (`#/events/%`) is the `invalid` page, so a crafted link shows an error
 * instead of failing the whole console.
 *
 * @param hash - `location.hash`, e.g. `#/events?status=unconfirmed`.
 * @internal Exported for its test, which reads fragments without a browser.
 */
export function parseRoute(hash: string): Route {
  const [pathPart = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  const segments = pathPart.split('/').filter((segment) => segment !== '');
  if (segments[0] === 'events' && segments[1] !== undefined) {
    const id = decoded(segments[1]);
    return id === undefined ? { page: 'invalid', fragment: hash } : { page: 'event', id };
  }
  if (segments[0] === 'subscriptions') return { page: 'subscriptions' };
  if (segments[0] === 'deliveries') return { page: 'deliveries' };
  return { page: 'events', filters: new URLSearchParams(search) };
}

/**
 * The fragment of a page, for an `href`.
 *
 * @param route - the page.
 */
export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'event':
      return `#/events/${encodeURIComponent(route.id)}`;
    case 'events': {
      const search = route.filters.toString();
      return search === '' ? '#/events' : `#/events?${search}`;
    }
    case 'invalid':
      return route.fragment;
    default:
      return `#/${route.page}`;
  }
}

// The segment percent-decoded, or `undefined` when it is not valid percent-encoding.
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The page of the current fragment, updated on every `hashchange`. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return route;
}
