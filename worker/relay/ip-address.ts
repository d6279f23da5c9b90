/**
 * Strict parsers of IP address text, as found in URL hosts and DNS answers: IPv4 in
 * dotted decimal (four parts, no leading zeros, the form WHATWG URL serialization and DNS
 * answers use) and IPv6 in every RFC 4291 text form (`::` compression anywhere, an
 * embedded dotted quad at the end). Anything else, zone ids (`fe80::1%eth0`) included,
 * is not an address.
 */

/** An IP address as its network-order bytes: 4 for IPv4, 16 for IPv6. */
export type IpAddress = Readonly<Uint8Array>;

const IPV4_PART = /^(?:0|[1-9]\d{0,2})$/;
const HEXTET = /^[0-9a-f]{1,4}$/i;

/**
 * Parses an IPv4 address in dotted decimal (`192.0.2.1`).
 *
 * @param text - the address text.
 * @returns its 4 bytes, or `undefined` when `text` is not exactly four decimal parts of
 *   0 to 255 without leading zeros.
 */
export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => IPV4_PART.test(part))) return undefined;
  const octets = parts.map(Number);
  return octets.every((octet) => octet <= 255) ? Uint8Array.from(octets) : undefined;
}

/**
 * Parses an IPv6 address in any RFC 4291 text form: eight hextets, `::` standing for one
 * or more zero hextets, and optionally a dotted quad as the last 32 bits
 * (`::ffff:192.0.2.1`). Brackets and zone ids are not part of an address.
 *
 * @param text - the address text, without brackets.
 * @returns its 16 bytes, or `undefined` when `text` is not an IPv6 address.
 *
 * @example
 * ```ts
 * parseIpv6('64:ff9b::10.0.0.1'); // Uint8Array [0, 0x64, 0xff, 0x9b, 0, ..., 10, 0, 0, 1]
 * parseIpv6('fe80::1%eth0'); // undefined
 * ```
 */
export function parseIpv6(text: string): IpAddress | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const [head = '', tail] = halves;
  const left = hextets(head, tail === undefined);
  const right = tail === undefined ? [] : hextets(tail, true);
  if (left === undefined || right === undefined) return undefined;
  const missing = 8 - left.length - right.length;
  // Without `::` all eight hextets are written; with it, it stands for at least one.
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const all = [...left, ...new Array<number>(missing).fill(0), ...right];
  return Uint8Array.from(all.flatMap((hextet) => [hextet >> 8, hextet & 0xff]));
}

/**
 * The hextets of one side of `::` (or of the whole address), a trailing dotted quad
 * counting as two when `mayEndInIpv4` (it is the last part of the address).
 */
function hextets(part: string, mayEndInIpv4: boolean): number[] | undefined {
  if (part === '') return [];
  const pieces = part.split(':');
  const values: number[] = [];
  for (const [index, piece] of pieces.entries()) {
    if (mayEndInIpv4 && index === pieces.length - 1 && piece.includes('.')) {
      const ipv4 = parseIpv4(piece);
      if (ipv4 === undefined) return undefined;
      values.push(((ipv4[0] ?? 0) << 8) | (ipv4[1] ?? 0), ((ipv4[2] ?? 0) << 8) | (ipv4[3] ?? 0));
    } else if (HEXTET.test(piece)) {
      values.push(Number.parseInt(piece, 16));
    } else {
      return undefined;
    }
  }
  return values;
}
