/**
 * The admin API's authentication: `Authorization: Bearer <ADMIN_TOKEN>` on
 * every `/admin/*` path, and the separation from the gateway's caller tokens both ways.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_FAILURES_PER_MINUTE } from '../../../worker/rate-limit/admin-failures.ts';
import {
  CALLER_TOKEN,
  errorBody,
  fetchGateway,
  gatewayRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { ADMIN_TOKEN, adminRequest, createSubscription } from '../routes/admin/admin-helpers.ts';

async function expectUnauthorized(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('WWW-Authenticate')).toBe('Bearer');
  const body = await errorBody(res);
  expect(body).toMatchObject({ status: 'error', code: 'unauthorized' });
  expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
}

const logs = useCapturedLogs();

describe('admin API', () => {
  describe('authentication', () => {
    it.each([
      ['no Authorization header', null],
      ['a wrong token', 'Bearer wrong-admin-token'],
      ['a prefix of the admin token', `Bearer ${ADMIN_TOKEN.slice(0, -1)}`],
      ['the admin token plus a character', `Bearer ${ADMIN_TOKEN}x`],
      ['the admin token without a scheme', ADMIN_TOKEN],
      ['another scheme', `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}`],
      ['the scheme without a token', 'Bearer'],
      ['a gateway caller token', `Bearer ${CALLER_TOKEN}`],
    ])('should answer 401 to %s', async (_, authorization) => {
      const headers: Record<string, string> =
        authorization === null ? {} : { Authorization: authorization };
      await expectUnauthorized(
        await fetchGateway(adminRequest('GET', '/admin/subscriptions', { token: null, headers })),
      );
    });

    it('should throttle failed sign-ins per client address (429 with Retry-After), whatever is sent then', async () => {
      const client = `198.51.100.${Math.floor(Math.random() * 250) + 1}-${crypto.randomUUID()}`;
      const attempt = (token: string) =>
        fetchGateway(
          adminRequest('GET', '/admin/subscriptions', {
            token,
            headers: { 'CF-Connecting-IP': client },
          }),
        );
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await attempt(`guess-${i}`)).status);
      expect(statuses.slice(0, ADMIN_FAILURES_PER_MINUTE)).toEqual(
        Array(ADMIN_FAILURES_PER_MINUTE).fill(401),
      );
      expect(statuses.slice(ADMIN_FAILURES_PER_MINUTE)).toEqual(
        Array(40 - ADMIN_FAILURES_PER_MINUTE).fill(429),
      );
      // Throttled: even the right token waits, so a lucky guess is worth nothing now.
      const right = await attempt(ADMIN_TOKEN);
      expect(right.status).toBe(429);
      const retryAfter = Number(right.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await errorBody(right)).toMatchObject({ code: 'rate_limited' });
      // Another address is not affected.
      const other = await fetchGateway(
        adminRequest('GET', '/admin/subscriptions', {
          headers: { 'CF-Connecting-IP': `${client}-other` },
        }),
      );
      expect(other.status).toBe(200);
      expect(logs.text()).not.toContain('guess-');
    });

    it('should not count successful sign-ins', async () => {
      const client = `203.0.113.9-${crypto.randomUUID()}`;
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE + 5; i++) {
        const res = await fetchGateway(
          adminRequest('GET', '/admin/subscriptions', { headers: { 'CF-Connecting-IP': client } }),
        );
        expect(res.status).toBe(200);
      }
    });

    it('should store nothing when a create is refused', async () => {
      const url = `https://refused-${crypto.randomUUID()}.example.com/`;
      const res = await fetchGateway(
        adminRequest('POST', '/admin/subscriptions', { token: CALLER_TOKEN, json: { url } }),
      );
      await expectUnauthorized(res);
      const list = await fetchGateway(adminRequest('GET', '/admin/subscriptions'));
      expect(await list.text()).not.toContain(url);
    });

    it('should accept the admin token with the scheme in any case', async () => {
      const res = await fetchGateway(
        adminRequest('GET', '/admin/subscriptions', {
          token: null,
          headers: { Authorization: `bEaReR ${ADMIN_TOKEN}` },
        }),
      );
      expect(res.status).toBe(200);
    });

    it('should refuse every request when ADMIN_TOKEN is empty', async () => {
      const res = await fetchGateway(adminRequest('GET', '/admin/subscriptions'), {
        ADMIN_TOKEN: '',
      });
      await expectUnauthorized(res);
    });

    it('should answer 401 before routing, so unknown admin paths are not revealed', async () => {
      await expectUnauthorized(
        await fetchGateway(adminRequest('GET', '/admin/nope', { token: null })),
      );
      await expectUnauthorized(
        await fetchGateway(adminRequest('GET', '/admin', { token: CALLER_TOKEN })),
      );
      const known = await fetchGateway(adminRequest('GET', '/admin/nope'));
      expect(known.status).toBe(404);
      expect(await errorBody(known)).toMatchObject({ code: 'not_found' });
    });

    it('should guard a path with a trailing slash too', async () => {
      const res = await fetchGateway(
        adminRequest('GET', '/admin/subscriptions/', { token: CALLER_TOKEN }),
      );
      await expectUnauthorized(res);
    });

    it('should keep caller authentication on paths that only start like /admin', async () => {
      await expectUnauthorized(
        await fetchGateway(gatewayRequest('/administrator', { token: ADMIN_TOKEN })),
      );
      const res = await fetchGateway(gatewayRequest('/administrator'));
      expect(res.status).toBe(404);
    });

    it('should answer 405 with Allow to an admin path with another method', async () => {
      const res = await fetchGateway(adminRequest('PUT', '/admin/subscriptions', { json: {} }));
      expect(res.status).toBe(405);
      expect(res.headers.get('Allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
    });

    it('should never write the admin token or a secret to the logs', async () => {
      const created = await createSubscription();
      expect(logs.text()).not.toContain(ADMIN_TOKEN);
      expect(logs.text()).not.toContain(created.secret);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'subscription_created', subscription_id: created.id }),
      );
    });
  });

  describe('gateway routes', () => {
    it('should refuse the admin token on proxy routes, without calling the upstream', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', { token: ADMIN_TOKEN, requestId: id }),
      );
      await expectUnauthorized(res);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should still let the caller token through to proxy routes', async () => {
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status'));
      expect(res.status).toBe(200);
    });
  });
});
