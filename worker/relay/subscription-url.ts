/**
 * Which URLs a subscription may deliver to, so the relay cannot be turned against
 * internal services (server-side request forgery): https only, http only for loopback
 * when local subscribers are allowed, never a private, link-local, CGNAT, unspecified,
 * multicast or metadata address. Hostnames are not
 * resolved here: DNS answers (and DNS rebinding) are checked again at delivery time.
 */

/** Options of {@link subscriptionUrlProblem}. */
interface SubscriptionUrlOptions {
  /** `ALLOW_LOCAL_SUBSCRIBERS` is on: loopback targets (http or https) are allowed. */
  readonly allowLocal: boolean;
}

/** What {@link checkSubscriptionUrl} concluded: the normalized URL, or why it is refused. */
type SubscriptionUrlCheck =
  | { readonly ok: true; readonly url: string }
  | { readonly ok: false; readonly message: string };

type Range = readonly [base: string, prefixLength: number, label: string];

// Loopback is handled apart: it is the one class ALLOW_LOCAL_SUBSCRIBERS opens.
const IPV4_REFUSED: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified ("this network") address'],
  ['10.0.0.0', 8, 'private address (10.0.0.0/8)'],
  ['100.64.0.0', 10, 'shared (CGNAT) address (100.64.0.0/10)'],
  ['169.254.0.0', 16, 'link-local address (169.254.0.0/16)'],
  ['172.16.0.0', 12, 'private address (172.16.0.0/12)'],
  ['192.0.0.0', 24, 'IETF protocol assignment address (192.0.0.0/24)'],
  ['192.168.0.0', 16, 'private address (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'benchmarking address (198.18.0.0/15)'],
  ['224.0.0.0', 4, 'multicast address (224.0.0.0/4)'],
  ['240.0.0.0', 4, 'reserved or broadcast address (240.0.0.0/4)'],
];

const METADATA_HOSTS: ReadonlySet<string> = new Set([
  '169.254.169.254',
  'metadata.google.internal',
  'metadata.goog',
]);

const TRUE_ISH: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);

/**
 * Reads `ALLOW_LOCAL_SUBSCRIBERS`: `1`, `true`, `yes` or `on` (any case, spaces
 * trimmed) turn it on; anything else, including unset, leaves it off.
 *
 * @param value - the variable's value.
 * @returns whether loopback subscribers are allowed.
 * @default false
 */
export function allowLocalSubscribers(value: string | undefined): boolean {
  return TRUE_ISH.has((value ?? '').trim().toLowerCase());
}

/**
 * Checks a subscription URL against the rules above and normalizes it (WHATWG URL
 * serialization: lowercase host, IPv4 in dotted decimal, compressed IPv6), so what is
 * checked is exactly what will be called.
 *
 * @param raw - the URL as the admin sent it.
 * @param options - whether loopback subscribers are allowed.
 * @returns `{ ok: true, url }` with the normalized URL, or `{ ok: false, message }`.
 *
 * @example
 * ```ts
 * checkSubscriptionUrl('https://hooks.example.com/edgepay', { allowLocal: false });
 * // { ok: true, url: 'https://hooks.example.com/edgepay' }
 * ```
 */
export function checkSubscriptionUrl(
  raw: string,
  options: SubscriptionUrlOptions,
): SubscriptionUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('Expected an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return refuse('Expected an https URL');
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('URLs with credentials are not allowed');
  }
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  if (METADATA_HOSTS.has(host)) return refuse('Not allowed: cloud metadata address');
  const ipv6 = host.startsWith('[') ? parseIpv6(host.slice(1, -1)) : undefined;
  const ipv4 = ipv6 === undefined ? parseIpv4(host) : embeddedIpv4(ipv6);
  const problem = ipv4 === undefined ? ipv6Problem(ipv6) : ipv4Problem(ipv4, ipv6 !== undefined);
  if (problem !== undefined) return refuse(problem);
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    (ipv4 !== undefined && ipv4 >>> 24 === 127) ||
    ipv6?.every((hextet, i) => hextet === (i === 7 ? 1 : 0)) === true;
  if (loopback && !options.allowLocal) {
    return refuse(
      'Not allowed: loopback address (allowed only with ALLOW_LOCAL_SUBSCRIBERS, for local development)',
    );
  }
  if (url.protocol === 'http:' && !loopback) {
    return refuse('Expected an https URL (http is allowed only for loopback in local development)');
  }
  return { ok: true, url: url.href };
}

function refuse(message: string): SubscriptionUrlCheck {
  return { ok: false, message };
}

/** A dotted-decimal IPv4 address (as WHATWG URL serializes every IPv4 form) as a uint32. */
function parseIpv4(host: string): number | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (match === null) return undefined;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

/** A serialized (valid, compressed) IPv6 address as eight hextets. */
function parseIpv6(text: string): number[] {
  const [head = '', tail] = text.split('::');
  const hextets = (part: string) =>
    part === '' ? [] : part.split(':').map((h) => parseInt(h, 16));
  const left = hextets(head);
  const right = tail === undefined ? [] : hextets(tail);
  const zeros = new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

/**
 * The IPv4 address an IPv6 address carries where it stands for one: IPv4-mapped
 * (`::ffff:0:0/96`), IPv4-compatible (`::/96`, deprecated), NAT64 (`64:ff9b::/96`) and
 * 6to4 (`2002::/16`). `::` and `::1` are not IPv4-compatible addresses.
 */
function embeddedIpv4(h: readonly number[]): number | undefined {
  const at = (i: number) => h[i] ?? 0;
  const low = at(6) * 0x10000 + at(7);
  const zeroTo = (n: number) => h.slice(0, n).every((hextet) => hextet === 0);
  if (zeroTo(5) && at(5) === 0xffff) return low;
  if (zeroTo(6) && at(6) !== 0) return low;
  if (at(0) === 0x64 && at(1) === 0xff9b && h.slice(2, 6).every((x) => x === 0)) return low;
  if (at(0) === 0x2002) return at(1) * 0x10000 + at(2);
  return undefined;
}

function ipv4Problem(address: number, embedded: boolean): string | undefined {
  const suffix = embedded ? ' in an IPv6 form' : '';
  for (const [base, prefixLength, label] of IPV4_REFUSED) {
    const shift = 32 - prefixLength;
    if (address >>> shift === (parseIpv4(base) ?? 0) >>> shift)
      return `Not allowed: ${label}${suffix}`;
  }
  // Loopback wrapped in IPv6 is refused even for local development: only plain forms pass.
  if (embedded && address >>> 24 === 127) return `Not allowed: loopback address${suffix}`;
  return undefined;
}

function ipv6Problem(h: readonly number[] | undefined): string | undefined {
  if (h === undefined) return undefined;
  const first = h[0] ?? 0;
  if (h.every((hextet) => hextet === 0)) return 'Not allowed: unspecified address (::)';
  if ((first & 0xfe00) === 0xfc00) return 'Not allowed: unique local address (fc00::/7)';
  if ((first & 0xffc0) === 0xfe80) return 'Not allowed: link-local address (fe80::/10)';
  if ((first & 0xffc0) === 0xfec0) return 'Not allowed: site-local address (fec0::/10)';
  if ((first & 0xff00) === 0xff00) return 'Not allowed: multicast address (ff00::/8)';
  return undefined;
}
