/**
 * Which URLs a subscription may deliver to, so the relay cannot be turned against
 * internal services (server-side request forgery): https only, ports 443 and 80 (and
 * `SUBSCRIBER_PORTS`), never an address of a special-purpose range
 * (special-purpose-addresses.ts) nor a cloud metadata host. Loopback (and http, and any
 * port, for it) only with `ALLOW_LOCAL_SUBSCRIBERS`. Host names are not resolved here: the
 * consumer resolves them before each delivery (subscriber-dns.ts).
 */

import type { SubscriberSettings } from '../config.ts';
import { parseIpv4, parseIpv6 } from './ip-address.ts';
import { judgeAddress } from './special-purpose-addresses.ts';

/** What {@link checkSubscriptionUrl} concluded: the normalized URL, or why it is refused. */
type SubscriptionUrlCheck =
  | {
      readonly ok: true;
      /** The normalized URL: the one to store and to call. */
      readonly url: string;
      /**
       * The host name to resolve before each delivery; `null` when the host is an IP
       * address or a loopback name allowed by `ALLOW_LOCAL_SUBSCRIBERS`.
       */
      readonly hostName: string | null;
    }
  | { readonly ok: false; readonly message: string };

const METADATA_HOSTS: ReadonlySet<string> = new Set([
  '169.254.169.254',
  'metadata.google.internal',
  'metadata.goog',
]);

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'https:': 443, 'http:': 80 };

/**
 * Checks a subscription URL against the rules above and normalizes it: WHATWG URL
 * serialization (lowercase host, IPv4 in dotted decimal, compressed IPv6) and trailing
 * dots of a host name removed, so what is checked is exactly what will be called.
 *
 * @param raw - the URL as the admin sent it, or as stored.
 * @param settings - whether loopback subscribers are allowed, and the allowed ports.
 * @returns `{ ok: true, url, hostName }` with the normalized URL and the name to resolve
 *   before delivering, or `{ ok: false, message }`.
 *
 * @example
 * ```ts
 * checkSubscriptionUrl('https://Hooks.example.com./edgepay', DEFAULT_SUBSCRIBER_SETTINGS);
 * // { ok: true, url: 'https://hooks.example.com/edgepay', hostName: 'hooks.example.com' }
 * ```
 */
export function checkSubscriptionUrl(
  raw: string,
  settings: Pick<SubscriberSettings, 'allowLocal' | 'ports'>,
): SubscriptionUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('Expected an absolute URL');
  }
  const defaultPort = DEFAULT_PORTS[url.protocol];
  if (defaultPort === undefined) return refuse('Expected an https URL');
  if (url.username !== '' || url.password !== '') {
    return refuse('URLs with credentials are not allowed');
  }
  if (!url.hostname.startsWith('[')) {
    // `localhost.` and `localhost..` name localhost: judge (and call) the name without them.
    const name = url.hostname.replace(/\.+$/, '');
    if (name.split('.').includes('')) return refuse('Expected a host name without empty labels');
    // Re-parsed: `127.0.0.1..` becomes the IPv4 address 127.0.0.1 once the dots are gone.
    url.hostname = name;
  }
  const host = url.hostname;
  if (METADATA_HOSTS.has(host)) return refuse('Not allowed: cloud metadata address');
  const address = host.startsWith('[') ? parseIpv6(host.slice(1, -1)) : parseIpv4(host);
  const verdict = address === undefined ? undefined : judgeAddress(address);
  if (verdict?.kind === 'special') return refuse(`Not allowed: ${verdict.range}`);
  const loopback =
    verdict?.kind === 'loopback' || host === 'localhost' || host.endsWith('.localhost');
  if (loopback && !settings.allowLocal) {
    return refuse(
      'Not allowed: loopback address (allowed only with ALLOW_LOCAL_SUBSCRIBERS, for local development)',
    );
  }
  if (url.protocol === 'http:' && !loopback) {
    return refuse('Expected an https URL (http is allowed only for loopback in local development)');
  }
  const port = url.port === '' ? defaultPort : Number(url.port);
  if (!loopback && !settings.ports.has(port)) {
    const allowed = [...settings.ports].join(', ');
    return refuse(`Not allowed: port ${port} (allowed: ${allowed}; SUBSCRIBER_PORTS adds ports)`);
  }
  return { ok: true, url: url.href, hostName: address === undefined && !loopback ? host : null };
}

function refuse(message: string): SubscriptionUrlCheck {
  return { ok: false, message };
}
