/**
 * DNS rebinding between the subscriber check and the delivery: the consumer asks for the
 * host name again once the request is done (worker/relay/recheck-delivery.ts), and an
 * answer that may have come from another host keeps nothing an admin could read back.
 * The fake resolver of fake-dns.ts changes its answer once a subscriber request went out,
 * as a rebinding name does between the check and the delivery's own lookup; the requests
 * themselves reach the recording receiver over real HTTP.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { findDelivery } from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { recheckSubscriberHost } from '../../../worker/relay/subscriber-dns.ts';
import { useCapturedLogs } from '../helpers.ts';
import { disableTestSubscriptions, receivedUnder } from './delivery-helpers.ts';
import { deliverTo, fakeNetwork, hostName, RESOLVER, type ZoneEntry } from './fake-dns.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

const PUBLIC = '93.184.215.14';
const OTHER_PUBLIC = '8.8.4.4';

describe('recheck-delivery', () => {
  describe('recheckSubscriberHost', () => {
    const recheck = (checked: string[], entry: ZoneEntry) =>
      recheckSubscriberHost('hooks.test', checked, {
        resolver: RESOLVER,
        allowLoopback: false,
        fetch: fakeNetwork({ 'hooks.test': entry }).fetch,
        timeoutMs: 200,
      });

    it('should find no change when every address is among the checked ones, however written', async () => {
      expect(await recheck([PUBLIC, '2606:4700::1111'], { A: [PUBLIC] })).toEqual({
        kind: 'unchanged',
      });
      expect(
        await recheck(['2606:4700::1111'], { AAAA: ['2606:4700:0000:0000:0000:0000:0000:1111'] }),
      ).toEqual({ kind: 'unchanged' });
    });

    it('should report a public address the check did not see, naming both answers', async () => {
      expect(await recheck([PUBLIC], { A: [PUBLIC, OTHER_PUBLIC] })).toEqual({
        kind: 'changed',
        note: `hooks.test resolved to ${PUBLIC} before the request and to ${PUBLIC}, ${OTHER_PUBLIC} after it`,
      });
    });

    it('should report a lookup that fails as a change', async () => {
      expect(await recheck([PUBLIC], { status: 2 })).toEqual({
        kind: 'changed',
        note: expect.stringContaining('hooks.test could not be asked again: DNS lookup'),
      });
    });

    it('should refuse a name that now resolves to a private address', async () => {
      expect(await recheck([PUBLIC], { A: ['10.0.0.7'] })).toEqual({
        kind: 'refused',
        error: expect.stringMatching(
          /^subscriber host resolves to a private address: hooks\.test has 10\.0\.0\.7.*asked again after the request$/,
        ),
      });
    });
  });

  describe('relay consumer (queue edgepay-deliveries)', () => {
    it('should keep the answer of a name whose addresses held, and ask for it before and after', async () => {
      const host = hostName('steady');
      const { stored, network } = await deliverTo(
        host,
        { [host]: { A: [PUBLIC] } },
        {},
        'https',
        500,
      );
      expect(network.queries.sort()).toEqual([
        `A ${host}`,
        `A ${host}`,
        `AAAA ${host}`,
        `AAAA ${host}`,
      ]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { attempt: 1, status: 500, error: null, responseExcerpt: 'answered 500' },
      ]);
    });

    it('should keep no answer from a name that turned private during the attempt, and fail the delivery for good', async () => {
      const host = hostName('rebind');
      const zone = { [host]: { A: [PUBLIC], after: { A: ['169.254.169.254'] } } };
      const { stored, key, result } = await deliverTo(host, zone, {}, 'https', 500);
      // The request did go out (a rebinding name is public when checked) ...
      expect(await receivedUnder(key)).toHaveLength(1);
      // ... but nothing of its answer is kept, and nothing is sent to that name again.
      expect(result.explicitAcks).toEqual(['msg-0']);
      expect(result.retryMessages).toEqual([]);
      const attempts = await listDeliveryAttempts(env.DB, stored.deliveryId);
      expect(attempts).toMatchObject([
        {
          attempt: 1,
          status: null,
          responseExcerpt: null,
          error: expect.stringContaining(
            `resolves to a private address: ${host} has 169.254.169.254`,
          ),
        },
      ]);
      expect(attempts[0]?.error).toContain('its answer is not kept');
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
        status: 'failed',
        nextAttemptAt: null,
      });
    });

    it.each([
      ['moved to other public addresses', { A: [OTHER_PUBLIC] }, `to ${OTHER_PUBLIC} after it`],
      ['cannot be asked again', { http: 503 }, 'could not be asked again'],
    ] as const)(
      'should keep the status but not the excerpt when the name %s, and retry on schedule',
      async (_, after, note) => {
        const host = hostName('moved');
        const zone = { [host]: { A: [PUBLIC], after } };
        const { stored, result } = await deliverTo(host, zone, {}, 'https', 500);
        expect(result.retryMessages.map((message) => message.msgId)).toEqual(['msg-0']);
        const [attempt, ...more] = await listDeliveryAttempts(env.DB, stored.deliveryId);
        expect(more).toEqual([]);
        expect(attempt).toMatchObject({ status: 500, responseExcerpt: null });
        expect(attempt?.error).toMatch(/^response not kept: /);
        expect(attempt?.error).toContain(note);
        expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({
          status: 'pending',
          lastStatus: 500,
        });
      },
    );

    it('should count a 2xx from a name that moved to other public addresses as delivered, without its excerpt', async () => {
      const host = hostName('moved-ok');
      const zone = { [host]: { A: [PUBLIC], after: { A: [OTHER_PUBLIC] } } };
      const { stored } = await deliverTo(host, zone);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { status: 200, responseExcerpt: null, error: expect.stringMatching(/^response not kept/) },
      ]);
      expect(await findDelivery(env.DB, stored.deliveryId)).toMatchObject({ status: 'delivered' });
    });

    it('should not ask again for a subscriber given by IP address', async () => {
      const { stored, network } = await deliverTo('8.8.8.8', {}, {}, 'https', 500);
      expect(network.queries).toEqual([]);
      expect(await listDeliveryAttempts(env.DB, stored.deliveryId)).toMatchObject([
        { status: 500, responseExcerpt: 'answered 500' },
      ]);
    });
  });
});
