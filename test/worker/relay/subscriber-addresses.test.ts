/**
 * The IP address parsers (worker/relay/ip-address.ts) and the special-purpose judgement
 * (worker/relay/special-purpose-addresses.ts) on address text as DNS answers give it,
 * which, unlike URL hosts, no WHATWG parser has normalized first.
 */
import { describe, expect, it } from 'vitest';
import { parseIpv4, parseIpv6 } from '../../../worker/relay/ip-address.ts';
import { judgeAddress } from '../../../worker/relay/special-purpose-addresses.ts';

/** The eight hextets of a parsed IPv6 address, for readable expectations. */
function hextetsOf(text: string): number[] | undefined {
  const bytes = parseIpv6(text);
  if (bytes === undefined) return undefined;
  return Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
}

describe('ip-address', () => {
  describe('parseIpv4', () => {
    it.each([
      ['0.0.0.0', [0, 0, 0, 0]],
      ['255.255.255.255', [255, 255, 255, 255]],
      ['192.0.2.1', [192, 0, 2, 1]],
    ])('should parse %s', (text, octets) => {
      expect(Array.from(parseIpv4(text) ?? [])).toEqual(octets);
    });

    it.each([
      '',
      '1.2.3',
      '1.2.3.4.5',
      '256.0.0.1',
      '01.2.3.4',
      '0x7f.0.0.1',
      '2130706433',
      ' 1.2.3.4',
      '1.2.3.4.',
      '1..3.4',
    ])('should refuse %j', (text) => {
      expect(parseIpv4(text)).toBeUndefined();
    });
  });

  describe('parseIpv6', () => {
    it.each([
      ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
      ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
      ['1::', [1, 0, 0, 0, 0, 0, 0, 0]],
      ['1:2:3:4:5:6:7::', [1, 2, 3, 4, 5, 6, 7, 0]],
      ['::2:3:4:5:6:7:8', [0, 2, 3, 4, 5, 6, 7, 8]],
      ['1:2::7:8', [1, 2, 0, 0, 0, 0, 7, 8]],
      ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
      ['2001:0DB8:0000:0000:0000:0000:0000:0001', [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]],
      ['::ffff:192.0.2.1', [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x201]],
      ['64:ff9b::10.0.0.1', [0x64, 0xff9b, 0, 0, 0, 0, 0xa00, 1]],
      ['1:2:3:4:5:6:1.2.3.4', [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
      ['::1.2.3.4', [0, 0, 0, 0, 0, 0, 0x102, 0x304]],
    ])('should parse %s', (text, hextets) => {
      expect(hextetsOf(text)).toEqual(hextets);
    });

    it.each([
      ['empty', ''],
      ['seven hextets without ::', '1:2:3:4:5:6:7'],
      ['nine hextets', '1:2:3:4:5:6:7:8:9'],
      [':: standing for no hextet', '1::2:3:4:5:6:7:8'],
      ['two ::', '1::2::3'],
      ['a leading single colon', ':1::2'],
      ['a trailing single colon', '1::2:'],
      ['three colons', '1:::2'],
      ['a five-digit hextet', '12345::1'],
      ['a non-hex digit', 'g::1'],
      ['a zone id', 'fe80::1%eth0'],
      ['an encoded zone id', 'fe80::1%25eth0'],
      ['brackets', '[::1]'],
      ['a dotted quad not at the end', '::1.2.3.4:5'],
      ['a dotted quad before ::', '1.2.3.4::'],
      ['a short dotted quad', '::1.2.3'],
      ['a dotted quad out of range', '::256.1.1.1'],
      ['a dotted quad with a leading zero', '::01.2.3.4'],
      ['nine hextets with a dotted quad', '1:2:3:4:5:6:7:1.2.3.4'],
      ['an IPv4 address', '10.0.0.1'],
    ])('should refuse %s (%j)', (_, text) => {
      expect(parseIpv6(text)).toBeUndefined();
    });
  });
});

describe('special-purpose-addresses', () => {
  describe('judgeAddress', () => {
    const judge = (text: string) => {
      const address = text.includes(':') ? parseIpv6(text) : parseIpv4(text);
      if (address === undefined) throw new TypeError(`not an address: ${text}`);
      return judgeAddress(address);
    };

    it.each([
      ['10.0.0.1', 'private address (10.0.0.0/8)'],
      ['::ffff:7f00:1', 'loopback address (127.0.0.0/8) in an IPv6 form'],
      ['::ffff:127.0.0.1', 'loopback address (127.0.0.0/8) in an IPv6 form'],
      ['64:ff9b::a00:1', 'private address (10.0.0.0/8) in an IPv6 form'],
      ['64:ff9b::169.254.169.254', 'link-local address (169.254.0.0/16) in an IPv6 form'],
      ['64:ff9b:1::a00:1', 'local-use NAT64 address (64:ff9b:1::/48)'],
      ['2002:a00:1::', 'private address (10.0.0.0/8) in an IPv6 form'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo address (2001::/32)'],
      ['0:0:0:0:ffff:0:7f00:1', 'address outside global unicast space (2000::/3)'],
      ['FD00:EC2::254', 'unique local address (fc00::/7)'],
    ])('should refuse %s as %s', (text, range) => {
      expect(judge(text)).toEqual({ kind: 'special', range });
    });

    it.each(['127.0.0.1', '127.255.255.255', '::1', '0:0:0:0:0:0:0:1'])(
      'should judge %s loopback',
      (text) => {
        expect(judge(text)).toEqual({ kind: 'loopback' });
      },
    );

    it.each([
      '8.8.8.8',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::',
    ])('should judge %s public', (text) => {
      expect(judge(text)).toEqual({ kind: 'public' });
    });
  });
});
