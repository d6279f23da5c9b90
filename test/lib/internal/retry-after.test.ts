/**
 * `parseRetryAfter` (lib/internal/retry-after.ts), the one Retry-After reader: the SDK's
 * retries read it as the relay's delivery schedule does (the shared suite, also run in
 * test/worker/relay/retry-after.test.ts), and a client waits as an HTTP-date says over real HTTP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PaymentsClient, type RequestEvent } from '../../../lib/index.ts';
import { parseRetryAfter } from '../../../lib/internal/retry-after.ts';
import { retryAfterMs } from '../../../lib/internal/retry-timing.ts';
import { retryAfterSuite } from '../../shared/retry-after-suite.ts';

retryAfterSuite('SDK retries', async (value) => {
  const ms = retryAfterMs(new Headers({ 'Retry-After': value }), Date.now());
  return ms === undefined ? undefined : ms / 1000;
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('should read delay-seconds, spaces around', () => {
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it.each([
    ['IMF-fixdate', 'Tue, 01 Jan 2030 00:10:00 GMT'],
    ['rfc850', 'Tuesday, 01-Jan-30 00:10:00 GMT'],
    ['asctime', 'Tue Jan  1 00:10:00 2030'],
  ])('should read a %s date as seconds from now', (_, value) => {
    expect(parseRetryAfter(value, now)).toBe(600);
  });

  it('should round a date part of a second away up to a whole second', () => {
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:01 GMT', now - 500)).toBe(2);
  });

  it('should answer 0 for a date in the past', () => {
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:00:00 GMT', now)).toBe(0);
  });

  it('should read an asctime date as GMT whatever the local time zone', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(parseRetryAfter('Tue Jan  1 00:10:00 2030', now)).toBe(600);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.each([
    [null],
    [undefined],
    [''],
    ['   '],
    ['Tue, 01 Jan 2030 00:10 GMT'],
    ['Tue, 99 Foo 2030 00:10:00 GMT'],
  ])('should ignore %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('PaymentsClient', () => {
  describe('Retry-After', () => {
    // In front of the sandbox: answers the first request 503 with `retryAfter()`, then
    // passes every later one through.
    let server: Server;
    let front: string;
    let retryAfter: () => string;
    let refused = 0;

    beforeAll(async () => {
      const upstream = inject('sandboxUrl');
      server = createServer((req, res) => {
        if (refused === 0) {
          refused++;
          res.writeHead(503, { 'content-type': 'application/json', 'retry-after': retryAfter() });
          res.end('{"status":"error","message":"busy","code":"internal_error"}');
          return;
        }
        fetch(`${upstream}${req.url ?? '/'}`, { headers: { accept: 'application/json' } }).then(
          async (answer) => {
            res.writeHead(answer.status, { 'content-type': 'application/json' });
            res.end(await answer.text());
          },
          () => res.destroy(),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      front = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('should wait until an asctime HTTP-date before retrying', async () => {
      const requests: { event: RequestEvent; at: number }[] = [];
      const client = new PaymentsClient({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        baseUrl: front,
        // Backoff alone would wait 250 ms.
        random: () => 0,
        onRequest: (event) => requests.push({ event, at: Date.now() }),
      });
      const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 2000);
      const day = at.toUTCString().slice(0, 3);
      const month = at.toUTCString().slice(8, 11);
      const time = at.toISOString().slice(11, 19);
      const date = String(at.getUTCDate()).padStart(2, ' ');
      retryAfter = () => `${day} ${month} ${date} ${time} ${at.getUTCFullYear()}`;
      refused = 0;
      const banks = await client.banks.list();
      expect(banks.length).toBeGreaterThan(0);
      expect(requests.map(({ event }) => event.attempt)).toEqual([1, 2]);
      const [first, second] = requests;
      // The date has whole seconds: the wait is 1 to 2 s, never the 250 ms backoff.
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(900);
    });
  });
});
