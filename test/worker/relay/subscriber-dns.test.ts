/**
 * The DNS check of subscriber host names (worker/relay/subscriber-dns.ts), and the
 * consumer running it before each delivery, through the fake resolver of fake-dns.ts.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { checkSubscriberHost } from '../../../worker/relay/subscriber-dns.ts';
import { useCapturedLogs } from '../helpers.ts';
import { disableTestSubscriptions, receivedUnder } from './delivery-helpers.ts';
import { deliverTo, fakeNetwork, hostName, RESOLVER, type ZoneEntry } from './fake-dns.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

describe('subscriber-dns', () => {
  describe('checkSubscriberHost', () => {
    const check = (name: string, zone: Record<string, ZoneEntry>, allowLoopback = false) => {
      const network = fakeNetwork(zone);
      const result = checkSubscriberHost(name, {
        resolver: RESOLVER,
        allowLoopback,
        fetch: network.fetch,
        timeoutMs: 200,
      });
      return { network, result };
    };

    it('should ask A and AAAA and accept public answers', async () => {
      const { network, result } = check('hooks.test', {
        'hooks.test': { A: ['93.184.215.14'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
      });
      expect(await result).toEqual({
        ok: true,
        addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      });
      expect(network.queries.sort()).toEqual(['A hooks.test', 'AAAA hooks.test']);
    });

    it('should accept a public answer at the end of a CNAME chain', async () => {
      const { result } = check('www.hooks.test', {
        'www.hooks.test': { cname: 'edge.hooks.test' },
        'edge.hooks.test': { cname: 'origin.hooks.test' },
        'origin.hooks.test': { A: ['8.8.8.8'] },
      });
      expect(await result).toEqual({ ok: true, addresses: ['8.8.8.8'] });
    });

    it.each([
      ['127.0.0.1', { A: ['127.0.0.1'] }, 'loopback address'],
      ['10.0.0.1', { A: ['10.0.0.1'] }, 'private address (10.0.0.0/8)'],
      ['169.254.169.254', { A: ['169.254.169.254'] }, 'link-local address (169.254.0.0/16)'],
      ['::ffff:7f00:1', { AAAA: ['::ffff:7f00:1'] }, 'loopback address (127.0.0.0/8) in an IPv6'],
      ['64:ff9b::a00:1', { AAAA: ['64:ff9b::a00:1'] }, '(10.0.0.0/8) in an IPv6 form'],
      ['fd00::1', { AAAA: ['fd00::1'] }, 'unique local address (fc00::/7)'],
      ['a private AAAA beside a public A', { A: ['8.8.8.8'], AAAA: ['::1'] }, 'loopback'],
      ['one private A among public ones', { A: ['8.8.8.8', '192.168.1.1'] }, '192.168.0.0/16'],
    ])('should refuse a name resolving to %s, for good', async (_, entry, range) => {
      const outcome = await check('rebind.test', { 'rebind.test': entry }).result;
      expect(outcome).toEqual({
        ok: false,
        retry: false,
        error: expect.stringMatching(
          /^subscriber host resolves to a private address: rebind\.test/,
        ),
      });
      expect(outcome).toMatchObject({ error: expect.stringContaining(range) });
    });

    it('should refuse a CNAME chain ending at a private address', async () => {
      const { result } = check('alias.test', {
        'alias.test': { cname: 'internal.corp.test' },
        'internal.corp.test': { A: ['10.1.2.3'] },
      });
      expect(await result).toMatchObject({ ok: false, retry: false });
    });

    it('should accept a loopback answer in local mode only', async () => {
      const zone = { 'dev.test': { A: ['127.0.0.1'], AAAA: ['::1'] } };
      expect(await check('dev.test', zone, true).result).toEqual({
        ok: true,
        addresses: ['127.0.0.1', '::1'],
      });
      expect(await check('dev.test', zone, false).result).toMatchObject({
        ok: false,
        retry: false,
      });
    });

    it('should still refuse private answers in local mode', async () => {
      const { result } = check('lan.test', { 'lan.test': { A: ['192.168.1.1'] } }, true);
      expect(await result).toMatchObject({ ok: false, retry: false });
    });

    it.each([
      ['the resolver answers HTTP 503', { http: 503 }, 'A query answered HTTP 503'],
      ['the resolver answers SERVFAIL', { status: 2 }, 'answered DNS status 2'],
      ['the resolver answers REFUSED', { status: 5 }, 'answered DNS status 5'],
      ['the answer is not DNS JSON', { garbage: true }, 'answered no DNS JSON'],
      ['the resolver is unreachable', { unreachable: true }, 'Network connection lost'],
      ['the resolver does not answer in time', { hang: true }, 'timed out after 200 ms'],
      ['an A record is not an address', { A: ['not-an-address'] }, 'bad address not-an-address'],
    ] as const)('should fail, to retry, when %s', async (_, entry, reason) => {
      const outcome = await check('flaky.test', { 'flaky.test': entry }).result;
      expect(outcome).toEqual({
        ok: false,
        retry: true,
        error: expect.stringMatching(/^DNS lookup of flaky\.test failed: /),
      });
      expect(outcome).toMatchObject({ error: expect.stringContaining(reason) });
    });

    it.each([
      ['does not exist (NXDOMAIN)', {}],
      ['has no A or AAAA record', { 'empty.test': { cname: 'nowhere.test' } }],
    ])('should fail, to retry, when the name %s', async (_, zone) => {
      const { result } = check('empty.test', zone);
      expect(await result).toEqual({
        ok: false,
        retry: true,
        error: 'subscriber host empty.test has no address',
      });
    });
  });

  describe('relay consumer (queue edgepay-deliveries)', () => {
    it.each([
      ['127.0.0.1', { A: ['127.0.0.1'] }],
      ['10.0.0.1', { A: ['10.0.0.1'] }],
      ['::ffff:7f00:1', { AAAA: ['::ffff:7f00:1'] }],
      ['64:ff9b::a00:1', { AAAA: ['64:ff9b::a00:1'] }],
    ])(
      'should send nothing to a name resolving to %s, record the attempt and fail the delivery',
      async (_, entry) => {
        const host = hostName('rebind');
        const { stored, key, network, result } = await deliverTo(host, { [host]: entry });
        expect(result.explicitAcks).toEqual(['msg-0']);
        expect(result.retryMessages).toEqual([]);
        expect(network.subscriberRequests).toEqual([]);
        expect(await receivedUnder(key)).toEqual([]);
        expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
          {
            attempt: 1,
            status: null,
            responseExcerpt: null,
            error: expect.stringContaining('subscriber host resolves to a private address'),
          },
        ]);
        expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
          status: 'failed',
          nextAttemptAt: null,
        });
      },
    );

    it('should deliver to a name resolving to a public address', async () => {
      const host = hostName('public');
      const { stored, key, network, result } = await deliverTo(host, {
        [host]: { A: ['93.184.215.14'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
      });
      // Asked before the request, and again after it (recheck-delivery.test.ts).
      expect(network.queries.sort()).toEqual([
        `A ${host}`,
        `A ${host}`,
        `AAAA ${host}`,
        `AAAA ${host}`,
      ]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      const [request, ...more] = await receivedUnder(key);
      expect(more).toEqual([]);
      expect(request).toMatchObject({ method: 'POST', body: stored.rawBody });
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'delivered',
        lastStatus: 200,
      });
    });

    it.each([
      ['the resolver fails', { http: 503 }, 'DNS lookup of'],
      ['the name does not exist', undefined, 'has no address'],
    ])('should retry on the schedule when %s, sending nothing', async (_, entry, error) => {
      const host = hostName('flaky');
      const before = Date.now();
      const zone: Record<string, ZoneEntry> = entry === undefined ? {} : { [host]: entry };
      const { stored, key, network, result } = await deliverTo(host, zone);
      expect(result.explicitAcks).toEqual([]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['msg-0']);
      expect(network.subscriberRequests).toEqual([]);
      expect(await receivedUnder(key)).toEqual([]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: null, error: expect.stringContaining(error) },
      ]);
      const delivery = await findDelivery(env.DB, stored.deliveryId);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
      // The first scheduled delay: 5 s ±20 %.
      expect(delivery?.nextAttemptAt).toBeGreaterThanOrEqual(before + 4000);
      expect(delivery?.nextAttemptAt).toBeLessThanOrEqual(Date.now() + 6000);
    });

    it('should deliver to localhost in local mode without asking the resolver', async () => {
      const port = new URL(inject('receiverUrl')).port;
      const { key, network, result } = await deliverTo(
        `localhost:${port}`,
        {},
        { ALLOW_LOCAL_SUBSCRIBERS: 'true' },
        'http',
      );
      expect(network.queries).toEqual([]);
      expect(network.subscriberRequests).toEqual([`http://localhost:${port}/hooks?key=${key}`]);
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(key)).toHaveLength(1);
    });

    it('should deliver to a name resolving to loopback in local mode', async () => {
      const host = hostName('dev');
      const { key, result } = await deliverTo(
        host,
        { [host]: { A: ['127.0.0.1'] } },
        { ALLOW_LOCAL_SUBSCRIBERS: 'true' },
      );
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(await receivedUnder(key)).toHaveLength(1);
    });

    it('should not ask the resolver for an IP address', async () => {
      const { network, result } = await deliverTo('8.8.8.8', {});
      expect(network.queries).toEqual([]);
      expect(network.subscriberRequests).toHaveLength(1);
      expect(result.explicitAcks).toEqual(['msg-0']);
    });
  });
});
