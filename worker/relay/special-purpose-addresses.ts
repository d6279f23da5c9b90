/**
 * The address ranges a subscriber may not be reached at: every entry of IANA's IPv4 and
 * IPv6 Special-Purpose Address Registries, the multicast blocks, and for IPv6 everything
 * outside the global unicast block 2000::/3 (IANA's IPv6 Address Space registry allocates
 * nothing else for unicast on the internet). Loopback is a class of its own because
 * `ALLOW_LOCAL_SUBSCRIBERS` opens it. IPv6 forms that carry an IPv4 address where it is
 * routed by that IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the IPv4 address.
 */
import { type IpAddress, parseIpv4, parseIpv6 } from './ip-address.ts';

/** What {@link judgeAddress} concluded about an address. */
export type AddressVerdict =
  | { readonly kind: 'public' }
  /** 127.0.0.0/8 or `::1` written as such: allowed only with `ALLOW_LOCAL_SUBSCRIBERS`. */
  | { readonly kind: 'loopback' }
  /** Refused: `range` names it, e.g. `private address (10.0.0.0/8)`. */
  | { readonly kind: 'special'; readonly range: string };

/**
 * How a matching address is judged: `refuse` (the default), `loopback`, or by the IPv4
 * address it carries (`last-32-bits` for IPv4-mapped and NAT64, `6to4` for bits 16 to 47).
 */
type RangeRule = 'refuse' | 'loopback' | 'last-32-bits' | '6to4';

type RangeEntry = readonly [cidr: string, name: string, rule?: RangeRule];

// One line per entry of the IANA IPv4 Special-Purpose Address Registry, with its name
// there and its RFC. The more specific entries inside 192.0.0.0/24 are covered by it.
const IPV4_ENTRIES: readonly RangeEntry[] = [
  ['0.0.0.0/8', 'unspecified ("this network") address'], // "This network", RFC 791
  ['10.0.0.0/8', 'private address'], // Private-Use, RFC 1918
  ['100.64.0.0/10', 'shared (CGNAT) address'], // Shared Address Space, RFC 6598
  ['127.0.0.0/8', 'loopback address', 'loopback'], // Loopback, RFC 1122
  ['169.254.0.0/16', 'link-local address'], // Link Local, RFC 3927
  ['172.16.0.0/12', 'private address'], // Private-Use, RFC 1918
  ['192.0.0.0/24', 'IETF protocol assignment address'], // IETF Protocol Assignments, RFC 6890
  ['192.0.2.0/24', 'documentation address'], // Documentation (TEST-NET-1), RFC 5737
  ['192.31.196.0/24', 'AS112 address'], // AS112-v4, RFC 7535
  ['192.52.193.0/24', 'AMT relay address'], // AMT, RFC 7450
  ['192.88.99.0/24', '6to4 relay anycast address (deprecated)'], // Deprecated (6to4 Relay Anycast), RFC 7526
  ['192.168.0.0/16', 'private address'], // Private-Use, RFC 1918
  ['192.175.48.0/24', 'AS112 address'], // Direct Delegation AS112 Service, RFC 7534
  ['198.18.0.0/15', 'benchmarking address'], // Benchmarking, RFC 2544
  ['198.51.100.0/24', 'documentation address'], // Documentation (TEST-NET-2), RFC 5737
  ['203.0.113.0/24', 'documentation address'], // Documentation (TEST-NET-3), RFC 5737
  ['224.0.0.0/4', 'multicast address'], // IPv4 Multicast Address Space Registry, RFC 5771
  ['255.255.255.255/32', 'limited broadcast address'], // Limited Broadcast, RFC 919
  ['240.0.0.0/4', 'reserved address'], // Reserved, RFC 1112
];

// One line per entry of the IANA IPv6 Special-Purpose Address Registry, first match
// wins (so the more specific come first). The entries inside 2001::/23 (PCP and TURN
// anycast, benchmarking, AMT, AS112-v6, ORCHIDv2, drone remote ID) are covered by it.
const IPV6_ENTRIES: readonly RangeEntry[] = [
  ['::/128', 'unspecified address'], // Unspecified Address, RFC 4291
  ['::1/128', 'loopback address', 'loopback'], // Loopback Address, RFC 4291
  ['::ffff:0:0/96', 'IPv4-mapped address', 'last-32-bits'], // IPv4-mapped Address, RFC 4291
  // Not in the registry: IPv4-compatible addresses, deprecated by RFC 4291 section 2.5.5.1.
  ['::/96', 'IPv4-compatible address (deprecated)'],
  ['64:ff9b::/96', 'NAT64 address', 'last-32-bits'], // IPv4-IPv6 Translat., RFC 6052
  // Local-use NAT64 prefixes may be longer than /96, so the IPv4 address has no fixed place.
  ['64:ff9b:1::/48', 'local-use NAT64 address'], // IPv4-IPv6 Translat., RFC 8215
  ['100::/64', 'discard-only address'], // Discard-Only Address Block, RFC 6666
  ['2001::/32', 'Teredo address'], // TEREDO, RFC 4380
  ['2001::/23', 'IETF protocol assignment address'], // IETF Protocol Assignments, RFC 2928
  ['2001:db8::/32', 'documentation address'], // Documentation, RFC 3849
  ['2002::/16', '6to4 address', '6to4'], // 6to4, RFC 3056
  ['2620:4f:8000::/48', 'AS112 address'], // Direct Delegation AS112 Service, RFC 7534
  ['3fff::/20', 'documentation address'], // Documentation, RFC 9637
  ['5f00::/16', 'SRv6 segment identifier'], // Segment Routing (SRv6) SIDs, RFC 9602
  ['fc00::/7', 'unique local address'], // Unique-Local, RFC 4193
  ['fe80::/10', 'link-local address'], // Link-Local Unicast, RFC 4291
  // Not in the registry: site-local, deprecated by RFC 3879 (outside 2000::/3 anyway).
  ['fec0::/10', 'site-local address (deprecated)'],
  ['ff00::/8', 'multicast address'], // IPv6 Multicast Address Space Registry, RFC 4291
];

/** The only IPv6 block IANA allocates for global unicast. */
const GLOBAL_UNICAST = '2000::/3';

interface Range {
  readonly prefix: IpAddress;
  readonly length: number;
  /** `<name> (<cidr>)`, as refusals say it. */
  readonly label: string;
  readonly rule: RangeRule;
}

const IPV4_RANGES = IPV4_ENTRIES.map(compile);
const IPV6_RANGES = IPV6_ENTRIES.map(compile);
const IPV6_GLOBAL_UNICAST = compile([GLOBAL_UNICAST, 'global unicast']);

/**
 * Judges an address against the special-purpose ranges.
 *
 * @param address - 4 bytes (IPv4) or 16 bytes (IPv6), as `parseIpv4` / `parseIpv6` give.
 * @returns `public`, `loopback` (127.0.0.0/8 or `::1`), or `special` with the range's
 *   name. Loopback carried inside IPv6 (`::ffff:127.0.0.1`) is `special`: nothing
 *   legitimate writes it, so only the plain forms are opened by local mode.
 *
 * @example
 * ```ts
 * judgeAddress(parseIpv6('64:ff9b::10.0.0.1')!);
 * // { kind: 'special', range: 'private address (10.0.0.0/8) in an IPv6 form' }
 * ```
 */
export function judgeAddress(address: IpAddress): AddressVerdict {
  const ranges = address.length === 4 ? IPV4_RANGES : IPV6_RANGES;
  const range = ranges.find((candidate) => matches(address, candidate));
  if (range !== undefined) return judgeInRange(address, range);
  if (address.length === 4 || matches(address, IPV6_GLOBAL_UNICAST)) return { kind: 'public' };
  return { kind: 'special', range: `address outside global unicast space (${GLOBAL_UNICAST})` };
}

function judgeInRange(address: IpAddress, range: Range): AddressVerdict {
  if (range.rule === 'loopback') return { kind: 'loopback' };
  if (range.rule === 'refuse') return { kind: 'special', range: range.label };
  const carried = range.rule === '6to4' ? address.subarray(2, 6) : address.subarray(12, 16);
  const inner = judgeAddress(carried);
  if (inner.kind === 'public') return inner;
  const label = inner.kind === 'loopback' ? 'loopback address (127.0.0.0/8)' : inner.range;
  return { kind: 'special', range: `${label} in an IPv6 form` };
}

/** Whether the first `range.length` bits of `address` are those of `range.prefix`. */
function matches(address: IpAddress, range: Range): boolean {
  if (address.length !== range.prefix.length) return false;
  for (let bit = 0; bit < range.length; bit += 8) {
    const index = bit / 8;
    const mask = (0xff << (8 - Math.min(8, range.length - bit))) & 0xff;
    if (((address[index] ?? 0) & mask) !== ((range.prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

function compile([cidr, name, rule = 'refuse']: RangeEntry): Range {
  const [base = '', length = ''] = cidr.split('/');
  const prefix = base.includes(':') ? parseIpv6(base) : parseIpv4(base);
  if (prefix === undefined) throw new TypeError(`Invalid range in the address table: ${cidr}`);
  return { prefix, length: Number(length), label: `${name} (${cidr})`, rule };
}
