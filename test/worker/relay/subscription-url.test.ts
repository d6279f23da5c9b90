/**
 * The subscription URL rules (worker/relay/subscription-url.ts), table-driven: every
 * special-purpose range of the IANA registries, the accepted neighbours of each, trailing
 * dots, ports and `SUBSCRIBER_PORTS`, and the loopback switch (`ALLOW_LOCAL_SUBSCRIBERS`).
 * Runs in workerd, whose WHATWG URL parser normalizes the hosts the rules see.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SUBSCRIBER_SETTINGS } from '../../../worker/config.ts';
import { checkSubscriptionUrl } from '../../../worker/relay/subscription-url.ts';
import { settingsWith } from '../config-fixtures.ts';

const OFF = DEFAULT_SUBSCRIBER_SETTINGS;
const ON = { ...DEFAULT_SUBSCRIBER_SETTINGS, allowLocal: true };

type Case = readonly [name: string, url: string, expected: string];

// [case, url, expected message fragment]; refused with and without ALLOW_LOCAL_SUBSCRIBERS.
const ALWAYS_REFUSED: readonly Case[] = [
  ['not a URL', 'hooks.example.com/x', 'Expected an absolute URL'],
  ['ftp', 'ftp://hooks.example.com/x', 'Expected an https URL'],
  ['javascript', 'javascript:alert(1)', 'Expected an https URL'],
  ['http to a public host', 'http://hooks.example.com/x', 'Expected an https URL'],
  ['a user name', 'https://user@hooks.example.com/x', 'credentials'],
  ['a user and password', 'https://user:pass@hooks.example.com/x', 'credentials'],
  ['a password only', 'https://:pass@hooks.example.com/x', 'credentials'],
  ['an IPv6 zone id', 'https://[fe80::1%25eth0]/x', 'Expected an absolute URL'],
  ['metadata 169.254.169.254', 'http://169.254.169.254/latest/meta-data', 'metadata'],
  ['metadata.google.internal', 'https://metadata.google.internal/x', 'metadata'],
  ['metadata.goog', 'https://metadata.goog/x', 'metadata'],
];

// Every entry of the IANA IPv4 Special-Purpose Address Registry (and multicast), at its
// low and high ends and in the other forms WHATWG URL parsing accepts for IPv4.
const IPV4_REFUSED: readonly Case[] = [
  ['0.0.0.0/8 (low)', 'https://0.0.0.0/x', 'unspecified ("this network") address (0.0.0.0/8)'],
  ['0.0.0.0/8 (high)', 'https://0.255.255.255/x', '(0.0.0.0/8)'],
  ['10/8 (low)', 'https://10.0.0.0/x', 'private address (10.0.0.0/8)'],
  ['10/8 (high)', 'https://10.255.255.255/x', 'private address (10.0.0.0/8)'],
  ['10/8 as a decimal integer', 'https://167772161/x', 'private address (10.0.0.0/8)'],
  ['10/8 in hex', 'https://0x0a.0.0.1/x', 'private address (10.0.0.0/8)'],
  ['100.64/10 (low)', 'https://100.64.0.0/x', 'shared (CGNAT) address (100.64.0.0/10)'],
  ['100.64/10 (high)', 'https://100.127.255.255/x', 'CGNAT'],
  ['169.254/16', 'https://169.254.10.10/x', 'link-local address (169.254.0.0/16)'],
  ['172.16/12 (low)', 'https://172.16.0.0/x', 'private address (172.16.0.0/12)'],
  ['172.16/12 (high)', 'https://172.31.255.255/x', 'private address (172.16.0.0/12)'],
  ['192.0.0/24 (low)', 'https://192.0.0.0/x', 'IETF protocol assignment address (192.0.0.0/24)'],
  ['192.0.0/24 (NAT64 discovery)', 'https://192.0.0.170/x', '(192.0.0.0/24)'],
  ['192.0.2/24', 'https://192.0.2.255/x', 'documentation address (192.0.2.0/24)'],
  ['192.31.196/24', 'https://192.31.196.1/x', 'AS112 address (192.31.196.0/24)'],
  ['192.52.193/24', 'https://192.52.193.1/x', 'AMT relay address (192.52.193.0/24)'],
  ['192.88.99/24', 'https://192.88.99.1/x', '6to4 relay anycast address (deprecated)'],
  ['192.168/16 (low)', 'https://192.168.0.0/x', 'private address (192.168.0.0/16)'],
  ['192.168/16 (high)', 'https://192.168.255.255/x', 'private address (192.168.0.0/16)'],
  ['192.175.48/24', 'https://192.175.48.1/x', 'AS112 address (192.175.48.0/24)'],
  ['198.18/15 (low)', 'https://198.18.0.0/x', 'benchmarking address (198.18.0.0/15)'],
  ['198.18/15 (high)', 'https://198.19.255.255/x', 'benchmarking address (198.18.0.0/15)'],
  ['198.51.100/24', 'https://198.51.100.7/x', 'documentation address (198.51.100.0/24)'],
  ['203.0.113/24', 'https://203.0.113.7/x', 'documentation address (203.0.113.0/24)'],
  ['224/4 (low)', 'https://224.0.0.1/x', 'multicast address (224.0.0.0/4)'],
  ['224/4 (high)', 'https://239.255.255.255/x', 'multicast address (224.0.0.0/4)'],
  ['240/4 (low)', 'https://240.0.0.0/x', 'reserved address (240.0.0.0/4)'],
  ['240/4 (high)', 'https://255.255.255.254/x', 'reserved address (240.0.0.0/4)'],
  ['255.255.255.255', 'https://255.255.255.255/x', 'limited broadcast address'],
];

// Every entry of the IANA IPv6 Special-Purpose Address Registry, the deprecated and
// multicast blocks, everything outside 2000::/3, and IPv4 carried in IPv6.
const IPV6_REFUSED: readonly Case[] = [
  ['::/128', 'https://[::]/x', 'unspecified address (::/128)'],
  ['::ffff:0:0/96 private', 'https://[::ffff:10.0.0.1]/x', '(10.0.0.0/8) in an IPv6 form'],
  ['::ffff:0:0/96 private (hex)', 'https://[::ffff:c0a8:101]/x', '(192.168.0.0/16) in an IPv6'],
  ['::ffff:0:0/96 link-local', 'https://[::ffff:169.254.1.1]/x', 'link-local address (169.254'],
  ['::ffff:0:0/96 CGNAT', 'https://[::ffff:100.64.0.1]/x', 'CGNAT'],
  ['::ffff:0:0/96 documentation', 'https://[::ffff:192.0.2.1]/x', 'documentation address'],
  ['::ffff:0:0/96 unspecified', 'https://[::ffff:0.0.0.0]/x', 'unspecified'],
  ['::ffff:0:0/96 loopback', 'http://[::ffff:127.0.0.1]/x', 'loopback address (127.0.0.0/8) in'],
  ['IPv4-translated ::ffff:0:0:0/96', 'https://[::ffff:0:7f00:1]/x', 'outside global unicast'],
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/x', 'IPv4-compatible address'],
  ['IPv4-compatible public', 'https://[::8.8.8.8]/x', 'IPv4-compatible address (deprecated)'],
  ['64:ff9b::/96 private', 'https://[64:ff9b::10.0.0.1]/x', '(10.0.0.0/8) in an IPv6 form'],
  ['64:ff9b::/96 loopback', 'https://[64:ff9b::7f00:1]/x', 'loopback address (127.0.0.0/8) in'],
  ['64:ff9b::/96 metadata', 'https://[64:ff9b::a9fe:a9fe]/x', 'link-local address (169.254'],
  ['64:ff9b:1::/48 public', 'https://[64:ff9b:1::808:808]/x', 'local-use NAT64 address'],
  ['64:ff9b:1::/48 (high)', 'https://[64:ff9b:1:ffff::1]/x', '(64:ff9b:1::/48)'],
  ['100::/64 (low)', 'https://[100::]/x', 'discard-only address (100::/64)'],
  ['100::/64 (high)', 'https://[100::ffff:ffff:ffff:ffff]/x', 'discard-only address'],
  ['Teredo 2001::/32', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', 'Teredo address'],
  ['2001::/23 (PCP anycast)', 'https://[2001:1::1]/x', 'IETF protocol assignment address'],
  ['2001::/23 (benchmarking)', 'https://[2001:2::1]/x', '(2001::/23)'],
  ['2001::/23 (high)', 'https://[2001:1ff:ffff::1]/x', '(2001::/23)'],
  ['2001:db8::/32', 'https://[2001:db8::1]/x', 'documentation address (2001:db8::/32)'],
  ['2001:db8::/32 (high)', 'https://[2001:db8:ffff::1]/x', '(2001:db8::/32)'],
  ['2002::/16 private', 'https://[2002:c0a8:101::1]/x', '(192.168.0.0/16) in an IPv6 form'],
  ['2002::/16 loopback', 'https://[2002:7f00:1::1]/x', 'loopback address (127.0.0.0/8) in'],
  ['2002::/16 documentation', 'https://[2002:cb00:7107::]/x', '(203.0.113.0/24) in an IPv6'],
  ['2620:4f:8000::/48', 'https://[2620:4f:8000::1]/x', 'AS112 address (2620:4f:8000::/48)'],
  ['3fff::/20 (low)', 'https://[3fff::1]/x', 'documentation address (3fff::/20)'],
  ['3fff::/20 (high)', 'https://[3fff:fff:ffff::1]/x', 'documentation address (3fff::/20)'],
  ['5f00::/16', 'https://[5f00::1]/x', 'SRv6 segment identifier (5f00::/16)'],
  ['fc00::/7 (fc)', 'https://[fc00::1]/x', 'unique local address (fc00::/7)'],
  ['fc00::/7 (fd)', 'https://[fd12:3456::1]/x', 'unique local address (fc00::/7)'],
  ['fc00::/7 (AWS metadata)', 'https://[fd00:ec2::254]/x', 'unique local address'],
  ['fe80::/10 (low)', 'https://[fe80::1]/x', 'link-local address (fe80::/10)'],
  ['fe80::/10 (high)', 'https://[febf::1]/x', 'link-local address (fe80::/10)'],
  ['fec0::/10', 'https://[fec0::1]/x', 'site-local address (deprecated)'],
  ['ff00::/8', 'https://[ff02::1]/x', 'multicast address (ff00::/8)'],
  ['ff00::/8 (global scope)', 'https://[ff0e::1]/x', 'multicast address (ff00::/8)'],
  [
    '4000::/2, not global unicast',
    'https://[4000::1]/x',
    'outside global unicast space (2000::/3)',
  ],
  ['::/8, not global unicast', 'https://[::1:0:0:1]/x', 'outside global unicast'],
];

// Accepted with and without the switch: [case, url, normalized URL].
const ACCEPTED: readonly Case[] = [
  ['an https host', 'https://hooks.example.com/edgepay', 'https://hooks.example.com/edgepay'],
  ['an upper-case host (normalized)', 'https://HOOKS.Example.COM', 'https://hooks.example.com/'],
  ['a query', 'https://hooks.example.com/a?b=c', 'https://hooks.example.com/a?b=c'],
  ['a public IPv4', 'https://8.8.8.8/x', 'https://8.8.8.8/x'],
  ['9.255.255.255, just below 10/8', 'https://9.255.255.255/', 'https://9.255.255.255/'],
  ['11.0.0.0, just above 10/8', 'https://11.0.0.0/', 'https://11.0.0.0/'],
  ['100.63.x, just below CGNAT', 'https://100.63.255.255/', 'https://100.63.255.255/'],
  ['100.128.x, just above CGNAT', 'https://100.128.0.1/', 'https://100.128.0.1/'],
  ['126.x, just below 127/8', 'https://126.255.255.255/', 'https://126.255.255.255/'],
  ['128.0.0.0, just above 127/8', 'https://128.0.0.0/', 'https://128.0.0.0/'],
  ['169.255.x, just above 169.254/16', 'https://169.255.0.1/', 'https://169.255.0.1/'],
  ['172.15.x, just below 172.16/12', 'https://172.15.255.255/', 'https://172.15.255.255/'],
  ['172.32.x, just above 172.16/12', 'https://172.32.0.1/', 'https://172.32.0.1/'],
  ['192.0.1.x, between 192.0.0/24 and 192.0.2/24', 'https://192.0.1.1/', 'https://192.0.1.1/'],
  ['192.0.3.x, just above 192.0.2/24', 'https://192.0.3.1/', 'https://192.0.3.1/'],
  ['192.169.x, just above 192.168/16', 'https://192.169.0.1/', 'https://192.169.0.1/'],
  ['198.20.x, just above 198.18/15', 'https://198.20.0.1/', 'https://198.20.0.1/'],
  ['203.0.114.x, just above 203.0.113/24', 'https://203.0.114.1/', 'https://203.0.114.1/'],
  ['223.x, just below 224/4', 'https://223.255.255.255/', 'https://223.255.255.255/'],
  ['a public IPv6', 'https://[2606:4700:4700::1111]/x', 'https://[2606:4700:4700::1111]/x'],
  ['IPv4-mapped public', 'https://[::ffff:8.8.8.8]/', 'https://[::ffff:808:808]/'],
  ['NAT64 of a public IPv4', 'https://[64:ff9b::8.8.8.8]/', 'https://[64:ff9b::808:808]/'],
  ['6to4 of a public IPv4', 'https://[2002:808:808::1]/', 'https://[2002:808:808::1]/'],
  ['2001:200::, just above 2001::/23', 'https://[2001:200::1]/', 'https://[2001:200::1]/'],
  ['2620:4f:8001::, next to AS112', 'https://[2620:4f:8001::1]/', 'https://[2620:4f:8001::1]/'],
  ['3fff:1000::, just above 3fff::/20', 'https://[3fff:1000::1]/', 'https://[3fff:1000::1]/'],
  [
    'a name starting like localhost',
    'https://localhost.example.com/',
    'https://localhost.example.com/',
  ],
  ['a name made of a loopback address', 'https://127.0.0.1.nip.io/', 'https://127.0.0.1.nip.io/'],
];

// Refused without the switch, accepted with it (normalized URL expected).
const LOOPBACK: readonly Case[] = [
  ['127.0.0.1 over http', 'http://127.0.0.1:8789/hooks', 'http://127.0.0.1:8789/hooks'],
  ['127.0.0.0/8 high end over http', 'http://127.255.255.254/', 'http://127.255.255.254/'],
  ['127.0.0.1 as a decimal integer', 'http://2130706433/', 'http://127.0.0.1/'],
  ['127.0.0.1 over https', 'https://127.0.0.1/hooks', 'https://127.0.0.1/hooks'],
  ['127.0.0.1 with two trailing dots', 'https://127.0.0.1../', 'https://127.0.0.1/'],
  ['::1 over http', 'http://[::1]:8789/hooks', 'http://[::1]:8789/hooks'],
  ['::1 written out', 'http://[0:0:0:0:0:0:0:1]/', 'http://[::1]/'],
  ['localhost over http', 'http://localhost:8789/hooks', 'http://localhost:8789/hooks'],
  ['LOCALHOST with a trailing dot', 'http://LOCALHOST./', 'http://localhost/'],
  ['localhost with two trailing dots', 'https://localhost../', 'https://localhost/'],
  ['a *.localhost name', 'http://receiver.localhost/', 'http://receiver.localhost/'],
  [
    'a *.localhost name with a trailing dot',
    'http://receiver.localhost./',
    'http://receiver.localhost/',
  ],
  ['any port', 'http://127.0.0.1:6379/', 'http://127.0.0.1:6379/'],
];

describe('subscription-url', () => {
  describe('checkSubscriptionUrl', () => {
    describe.each([
      ['without ALLOW_LOCAL_SUBSCRIBERS', OFF],
      ['with ALLOW_LOCAL_SUBSCRIBERS', ON],
    ])('%s', (_, settings) => {
      it.each([...ALWAYS_REFUSED, ...IPV4_REFUSED, ...IPV6_REFUSED])(
        'should refuse %s',
        (_case, url, message) => {
          const check = checkSubscriptionUrl(url, settings);
          expect(check).toEqual({ ok: false, message: expect.stringContaining(message) });
        },
      );

      it.each(ACCEPTED)('should accept %s', (_case, url, normalized) => {
        expect(checkSubscriptionUrl(url, settings)).toMatchObject({ ok: true, url: normalized });
      });
    });

    it.each(LOOPBACK)('should refuse loopback (%s) without the switch', (_case, url) => {
      expect(checkSubscriptionUrl(url, OFF)).toEqual({
        ok: false,
        message: expect.stringContaining(
          'loopback address (allowed only with ALLOW_LOCAL_SUBSCRIBERS',
        ),
      });
    });

    it.each(LOOPBACK)('should accept loopback (%s) with the switch', (_case, url, normalized) => {
      expect(checkSubscriptionUrl(url, ON)).toEqual({ ok: true, url: normalized, hostName: null });
    });

    describe('host names', () => {
      it.each([
        ['a name', 'https://hooks.example.com/x', 'hooks.example.com'],
        ['a name with a trailing dot', 'https://hooks.example.com./x', 'hooks.example.com'],
        ['a name of a loopback address', 'https://127.0.0.1.nip.io/', '127.0.0.1.nip.io'],
        ['a name of a private address', 'https://10.0.0.1.nip.io/', '10.0.0.1.nip.io'],
      ])('should name %s for resolution before delivery', (_, url, hostName) => {
        expect(checkSubscriptionUrl(url, OFF)).toMatchObject({ ok: true, hostName });
      });

      it.each([
        ['an IPv4 address', 'https://8.8.8.8/'],
        ['an IPv6 address', 'https://[2606:4700:4700::1111]/'],
      ])('should name nothing to resolve for %s', (_, url) => {
        expect(checkSubscriptionUrl(url, OFF)).toMatchObject({ ok: true, hostName: null });
      });
    });

    describe('trailing dots and empty labels', () => {
      it.each([
        ['one trailing dot', 'https://example.com./x', 'https://example.com/x'],
        ['two trailing dots', 'https://example.com../x', 'https://example.com/x'],
        ['a trailing dot and a port', 'https://example.com.:443/x', 'https://example.com/x'],
      ])('should remove %s', (_, url, normalized) => {
        expect(checkSubscriptionUrl(url, OFF)).toEqual({
          ok: true,
          url: normalized,
          hostName: 'example.com',
        });
      });

      it.each([
        ['a private address with trailing dots', 'https://10.0.0.1../x', 'private address'],
        ['a metadata host with a trailing dot', 'https://METADATA.google.internal./', 'metadata'],
        ['a metadata host with two trailing dots', 'https://metadata.goog../', 'metadata'],
        ['an empty label inside', 'https://hooks..example.com/', 'without empty labels'],
        ['an empty first label', 'https://.example.com/', 'without empty labels'],
        ['dots only', 'https://.../', 'without empty labels'],
      ])('should refuse %s', (_, url, message) => {
        for (const settings of [OFF, ON]) {
          expect(checkSubscriptionUrl(url, settings)).toEqual({
            ok: false,
            message: expect.stringContaining(message),
          });
        }
      });
    });

    describe('ports', () => {
      it.each([
        [
          '443 written out (normalized away)',
          'https://hooks.example.com:443/',
          'https://hooks.example.com/',
        ],
        ['80 over https', 'https://hooks.example.com:80/', 'https://hooks.example.com:80/'],
        ['443 on an IPv6 address', 'https://[2606:4700::1]:443/', 'https://[2606:4700::1]/'],
      ])('should accept %s', (_, url, normalized) => {
        expect(checkSubscriptionUrl(url, OFF)).toMatchObject({ ok: true, url: normalized });
      });

      it.each([
        ['8443', 'https://hooks.example.com:8443/', 'port 8443'],
        ['22', 'https://hooks.example.com:22/', 'port 22'],
        ['6379 on a public address', 'https://8.8.8.8:6379/', 'port 6379'],
        ['0', 'https://hooks.example.com:0/', 'port 0'],
      ])('should refuse port %s, in local mode too', (_, url, message) => {
        for (const settings of [OFF, ON]) {
          expect(checkSubscriptionUrl(url, settings)).toEqual({
            ok: false,
            message: `Not allowed: ${message} (allowed: 443, 80; SUBSCRIBER_PORTS adds ports)`,
          });
        }
      });

      it('should accept a port that SUBSCRIBER_PORTS adds', () => {
        const settings = settingsWith({ SUBSCRIBER_PORTS: '8443' }).subscribers;
        expect(checkSubscriptionUrl('https://hooks.example.com:8443/x', settings)).toEqual({
          ok: true,
          url: 'https://hooks.example.com:8443/x',
          hostName: 'hooks.example.com',
        });
        expect(checkSubscriptionUrl('https://hooks.example.com:9443/x', settings)).toEqual({
          ok: false,
          message: 'Not allowed: port 9443 (allowed: 443, 80, 8443; SUBSCRIBER_PORTS adds ports)',
        });
      });
    });
  });
});
