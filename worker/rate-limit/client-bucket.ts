// Which count a request goes to by its client address (failed admin sign-ins, webhook
// ingress): one per IPv4 address, one per IPv6 /64, one shared by every request without an address.
import { type IpAddress, parseIpv6 } from '../relay/ip-address.ts';

/**
 * The bucket of requests that carry no client address: outside Cloudflare's network (the
 * test runner, tools calling the Worker directly), where nothing tells one client from
 * another.
 */
const NO_ADDRESS_BUCKET = 'no-address';

/** `::ffff:0:0/96`: an IPv4 address written as IPv6 (RFC 4291 2.5.5.2). */
const IPV4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/**
 * The bucket a request's failed admin sign-ins are counted in, from `CF-Connecting-IP`
 * (Cloudflare sets it on every request it forwards, and a client cannot):
 * - IPv4: the address itself;
 * - IPv6: its /64 (`2001:db8:1:2::/64`), one spelling whatever the way it was written, since one
 *   subscriber line or host usually holds a whole /64 and could otherwise guess from 2^64
 *   addresses; an IPv4-mapped address counts as its IPv4 address;
 * - no header: {@link NO_ADDRESS_BUCKET}.
 * Any other value (never sent by Cloudflare) is its own bucket, as written.
 *
 * @param headers - the request headers.
 * @returns the bucket's name, for the limiter object's name and the logs.
 *
 * @example
 * ```ts
 * clientBucket(new Headers({ 'CF-Connecting-IP': '2001:DB8:1:2:0:0:0:9' })); // '2001:db8:1:2::/64'
 * ```
 */
export function clientBucket(headers: Headers): string {
  const address = headers.get('CF-Connecting-IP');
  if (address === null || address === '') return NO_ADDRESS_BUCKET;
  const bytes = parseIpv6(address);
  if (bytes === undefined) return address;
  if (IPV4_MAPPED_PREFIX.every((byte, index) => bytes[index] === byte)) {
    return Array.from(bytes.subarray(12)).join('.');
  }
  return `${prefix64(bytes)}::/64`;
}

/** The first four hextets of an IPv6 address, lower-case hex without leading zeros. */
function prefix64(bytes: IpAddress): string {
  const hextets: string[] = [];
  for (let index = 0; index < 8; index += 2) {
    hextets.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  }
  return hextets.join(':');
}
