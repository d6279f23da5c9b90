/**
 * The subscription URL rules (worker/relay/subscription-url.ts), table-driven: every refused
 * class, the accepted forms, and the loopback switch (`ALLOW_LOCAL_SUBSCRIBERS`). Runs in
 * workerd, whose WHATWG URL parser normalizes the hosts the rules see.
 */
import { describe, expect, it } from 'vitest';
import {
  allowLocalSubscribers,
  checkSubscriptionUrl,
} from '../../worker/relay/subscription-url.ts';

const OFF = { allowLocal: false };
const ON = { allowLocal: true };

// [case, url, expected message fragment]; refused with and without ALLOW_LOCAL_SUBSCRIBERS.
const ALWAYS_REFUSED: readonly (readonly [string, string, string])[] = [
  ['not a URL', 'hooks.example.com/x', 'Expected an absolute URL'],
  ['ftp', 'ftp://hooks.example.com/x', 'Expected an https URL'],
  ['javascript', 'javascript:alert(1)', 'Expected an https URL'],
  ['http to a public host', 'http://hooks.example.com/x', 'Expected an https URL'],
  ['a user name', 'https://user@hooks.example.com/x', 'credentials'],
  ['a user and password', 'https://user:pass@hooks.example.com/x', 'credentials'],
  ['a password only', 'https://:pass@hooks.example.com/x', 'credentials'],
  ['private 10/8', 'https://10.1.2.3/x', 'private address (10.0.0.0/8)'],
  ['private 172.16/12 (low end)', 'https://172.16.0.1/x', 'private address (172.16.0.0/12)'],
  ['private 172.16/12 (high end)', 'https://172.31.255.254/x', 'private address (172.16.0.0/12)'],
  ['private 192.168/16', 'https://192.168.1.10/x', 'private address (192.168.0.0/16)'],
  ['private 10/8 as a decimal integer', 'https://167772161/x', 'private address (10.0.0.0/8)'],
  ['private 10/8 in hex', 'https://0x0a.0.0.1/x', 'private address (10.0.0.0/8)'],
  ['CGNAT 100.64/10', 'https://100.64.0.1/x', 'CGNAT'],
  ['CGNAT 100.64/10 (high end)', 'https://100.127.255.255/x', 'CGNAT'],
  ['link-local 169.254/16', 'https://169.254.10.10/x', 'link-local address (169.254.0.0/16)'],
  ['metadata 169.254.169.254', 'http://169.254.169.254/latest/meta-data', 'metadata'],
  ['metadata.google.internal', 'https://metadata.google.internal/x', 'metadata'],
  [
    'metadata.google.internal with a trailing dot',
    'https://METADATA.google.internal./x',
    'metadata',
  ],
  ['metadata.goog', 'https://metadata.goog/x', 'metadata'],
  ['unspecified 0.0.0.0', 'https://0.0.0.0/x', 'unspecified'],
  ['this network 0/8', 'https://0.1.2.3/x', 'unspecified'],
  ['IETF 192.0.0/24', 'https://192.0.0.170/x', '192.0.0.0/24'],
  ['benchmarking 198.18/15', 'https://198.19.1.1/x', 'benchmarking'],
  ['multicast 224/4', 'https://239.1.1.1/x', 'multicast'],
  ['broadcast', 'https://255.255.255.255/x', 'broadcast'],
  ['IPv6 unspecified ::', 'https://[::]/x', 'unspecified address (::)'],
  ['IPv6 unique local fc00::/7', 'https://[fd12:3456::1]/x', 'unique local address (fc00::/7)'],
  ['IPv6 unique local (AWS metadata)', 'https://[fd00:ec2::254]/x', 'unique local address'],
  ['IPv6 link-local fe80::/10', 'https://[fe80::1]/x', 'link-local address (fe80::/10)'],
  ['IPv6 link-local (high end)', 'https://[febf::1]/x', 'link-local address (fe80::/10)'],
  ['IPv6 site-local fec0::/10', 'https://[fec0::1]/x', 'site-local'],
  ['IPv6 multicast', 'https://[ff02::1]/x', 'multicast address (ff00::/8)'],
  [
    'IPv4-mapped private',
    'https://[::ffff:10.0.0.1]/x',
    'private address (10.0.0.0/8) in an IPv6 form',
  ],
  [
    'IPv4-mapped private (hex)',
    'https://[::ffff:c0a8:101]/x',
    'private address (192.168.0.0/16) in an IPv6 form',
  ],
  [
    'IPv4-mapped metadata',
    'https://[::ffff:169.254.169.254]/x',
    'link-local address (169.254.0.0/16) in an IPv6 form',
  ],
  ['IPv4-mapped CGNAT', 'https://[::ffff:100.64.0.1]/x', 'CGNAT'],
  ['IPv4-mapped unspecified', 'https://[::ffff:0.0.0.0]/x', 'unspecified'],
  ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/x', 'loopback address in an IPv6 form'],
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/x', 'loopback address in an IPv6 form'],
  [
    'NAT64 private',
    'https://[64:ff9b::10.0.0.1]/x',
    'private address (10.0.0.0/8) in an IPv6 form',
  ],
  [
    '6to4 private',
    'https://[2002:c0a8:101::1]/x',
    'private address (192.168.0.0/16) in an IPv6 form',
  ],
];

// Refused without the switch, accepted with it (normalized URL expected).
const LOOPBACK: readonly (readonly [string, string, string])[] = [
  ['127.0.0.1 over http', 'http://127.0.0.1:8789/hooks', 'http://127.0.0.1:8789/hooks'],
  ['127.0.0.0/8 high end over http', 'http://127.255.255.254/', 'http://127.255.255.254/'],
  ['127.0.0.1 as a decimal integer', 'http://2130706433/', 'http://127.0.0.1/'],
  ['127.0.0.1 over https', 'https://127.0.0.1/hooks', 'https://127.0.0.1/hooks'],
  ['::1 over http', 'http://[::1]:8789/hooks', 'http://[::1]:8789/hooks'],
  ['::1 written out', 'http://[0:0:0:0:0:0:0:1]/', 'http://[::1]/'],
  ['localhost over http', 'http://localhost:8789/hooks', 'http://localhost:8789/hooks'],
  ['LOCALHOST with a trailing dot', 'http://LOCALHOST./', 'http://localhost./'],
  ['a *.localhost name', 'http://receiver.localhost/', 'http://receiver.localhost/'],
];

const ACCEPTED: readonly (readonly [string, string, string])[] = [
  ['an https host', 'https://hooks.example.com/edgepay', 'https://hooks.example.com/edgepay'],
  [
    'a port and query',
    'https://hooks.example.com:8443/a?b=c',
    'https://hooks.example.com:8443/a?b=c',
  ],
  ['an upper-case host (normalized)', 'https://HOOKS.Example.COM', 'https://hooks.example.com/'],
  ['a public IPv4', 'https://203.0.113.7/x', 'https://203.0.113.7/x'],
  ['172.15.x, just below 172.16/12', 'https://172.15.255.255/', 'https://172.15.255.255/'],
  ['172.32.x, just above 172.16/12', 'https://172.32.0.1/', 'https://172.32.0.1/'],
  ['100.128.x, just above CGNAT', 'https://100.128.0.1/', 'https://100.128.0.1/'],
  ['a public IPv6', 'https://[2001:db8::1]/x', 'https://[2001:db8::1]/x'],
  ['IPv4-mapped public', 'https://[::ffff:8.8.8.8]/', 'https://[::ffff:808:808]/'],
  [
    'a name that only starts like localhost',
    'https://localhost.example.com/',
    'https://localhost.example.com/',
  ],
];

describe('subscription-url', () => {
  describe('checkSubscriptionUrl', () => {
    describe.each([
      ['without ALLOW_LOCAL_SUBSCRIBERS', OFF],
      ['with ALLOW_LOCAL_SUBSCRIBERS', ON],
    ])('%s', (_, options) => {
      it.each(ALWAYS_REFUSED)('should refuse %s', (_case, url, message) => {
        const check = checkSubscriptionUrl(url, options);
        expect(check.ok).toBe(false);
        if (!check.ok) expect(check.message).toContain(message);
      });

      it.each(ACCEPTED)('should accept %s', (_case, url, normalized) => {
        expect(checkSubscriptionUrl(url, options)).toEqual({ ok: true, url: normalized });
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
      expect(checkSubscriptionUrl(url, ON)).toEqual({ ok: true, url: normalized });
    });
  });

  describe('allowLocalSubscribers', () => {
    it.each(['1', 'true', 'TRUE', ' yes ', 'on'])('should be on for %j', (value) => {
      expect(allowLocalSubscribers(value)).toBe(true);
    });

    it.each([undefined, '', '0', 'false', 'off', 'no', 'enabled'])(
      'should be off for %j',
      (value) => {
        expect(allowLocalSubscribers(value)).toBe(false);
      },
    );
  });
});
