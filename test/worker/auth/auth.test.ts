import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  CALLER_NAME,
  CALLER_TOKEN,
  errorBody,
  expectConfigurationError,
  fetchGateway,
  GATEWAY_ORIGIN,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

/**
 * Asserts a 401 `unauthorized` error body; with `requestId`, also that the gateway kept the id the
 * test sent, so an empty sandbox log for that id means no upstream call.
 */
async function expectUnauthorized(res: Response, requestId?: string): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('WWW-Authenticate')).toBe('Bearer');
  const body = await errorBody(res);
  expect(body).toMatchObject({ status: 'error', code: 'unauthorized' });
  expect(body.request_id).toBe(res.headers.get('X-Request-Id'));
  if (requestId !== undefined) expect(body.request_id).toBe(requestId);
}

const logs = useCapturedLogs();

describe('gateway', () => {
  describe('authentication', () => {
    it('should answer 401 without an Authorization header, without calling the upstream', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest('/banks', { token: null, requestId: id }));
      await expectUnauthorized(res, id);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should answer 401 with a wrong token, without calling the upstream', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/banks', { token: 'wrong-token', requestId: id }),
      );
      await expectUnauthorized(res, id);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it.each([
      ['a prefix of the token', `Bearer ${CALLER_TOKEN.slice(0, -1)}`],
      ['the token plus a character', `Bearer ${CALLER_TOKEN}x`],
      ['another scheme', `Basic ${btoa(`test:${CALLER_TOKEN}`)}`],
      ['the token without a scheme', CALLER_TOKEN],
      ['the scheme without a token', 'Bearer'],
      ['two tokens', `Bearer ${CALLER_TOKEN} ${CALLER_TOKEN}`],
      ['an empty header', ''],
    ])('should answer 401 to %s', async (_, authorization) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/banks', {
          token: null,
          requestId: id,
          headers: { Authorization: authorization },
        }),
      );
      await expectUnauthorized(res, id);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should answer 401 before routing, so unknown paths are not revealed', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/no-such-route`);
      await expectUnauthorized(res);
    });

    it('should let the configured token through to the upstream, without the token', async () => {
      const id = uniqueRequestId();
      // Not /banks: its responses are cached (cache.test.ts), so only the first would arrive.
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }));
      expect(res.status).toBe(200);
      const reached = await onlySandboxRequest(id);
      expect(reached).toMatchObject({
        method: 'GET',
        path: '/refunds/count-by-status',
        status: 200,
      });
      expect(reached.headers).not.toHaveProperty('authorization');
    });

    it('should accept the scheme in any case', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/refunds/count-by-status', {
          token: null,
          requestId: id,
          headers: { Authorization: `bEaReR ${CALLER_TOKEN}` },
        }),
      );
      expect(res.status).toBe(200);
      expect(await sandboxRequests(id)).toHaveLength(1);
    });

    it('should pick the caller whose token matches among several', async () => {
      const callers = [
        { name: 'alpha', token: 'alpha-token' },
        { name: 'beta', token: 'beta-token' },
      ];
      const res = await fetchGateway(gatewayRequest('/banks', { token: 'beta-token' }), {
        GATEWAY_CALLERS: JSON.stringify(callers),
      });
      expect(res.status).toBe(200);
      expect(logs.lines().at(-1)).toMatchObject({ event: 'request', caller: 'beta' });
    });

    it('should record the caller name in the access log, never the token', async () => {
      const res = await fetchGateway(gatewayRequest('/banks'));
      expect(res.status).toBe(200);
      expect(logs.text()).not.toContain(CALLER_TOKEN);
      expect(logs.lines()).toEqual([
        expect.objectContaining({
          event: 'request',
          caller: CALLER_NAME,
          route: 'banks.list',
          status: 200,
        }),
      ]);
    });
  });

  describe('malformed GATEWAY_CALLERS', () => {
    it.each([
      ['not JSON', `[{"name":"x","token":"${CALLER_TOKEN}"`],
      ['not an array', JSON.stringify({ name: 'x', token: CALLER_TOKEN })],
      ['a caller without a token', JSON.stringify([{ name: 'x' }])],
      ['an empty token', JSON.stringify([{ name: 'x', token: '' }])],
      ['a token with spaces', JSON.stringify([{ name: 'x', token: 'a b' }])],
      [
        'a token shared by two callers',
        JSON.stringify([
          { name: 'x', token: CALLER_TOKEN },
          { name: 'y', token: CALLER_TOKEN },
        ]),
      ],
      ['an empty value', ''],
    ])('should answer 503 configuration_error when it is %s', async (_, value) => {
      const res = await fetchGateway(gatewayRequest('/banks'), { GATEWAY_CALLERS: value });
      await expectConfigurationError(res, ['GATEWAY_CALLERS']);
    });

    it('should log the problem once per value, without the value', async () => {
      const value = `[{"name":"x","token":"${CALLER_TOKEN}-secret"`;
      for (let i = 0; i < 3; i++) {
        const res = await fetchGateway(gatewayRequest('/banks'), { GATEWAY_CALLERS: value });
        expect(res.status).toBe(503);
      }
      const problems = logs.lines().filter((line) => line.event === 'config_invalid');
      expect(problems).toEqual([
        {
          level: 'error',
          event: 'config_invalid',
          setting: 'GATEWAY_CALLERS',
          problem: 'expected a JSON array of { name, token, routes? }: not valid JSON',
        },
      ]);
      expect(logs.text()).not.toContain('secret');
      expect(logs.lines().filter((line) => line.event === 'request')).toHaveLength(3);
    });

    it('should report it on /healthz without naming it to a client without the admin token', async () => {
      for (const query of ['', '?deep=1']) {
        const res = await fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz${query}`), {
          GATEWAY_CALLERS: 'nope',
        });
        expect(res.status, query).toBe(503);
        expect(await res.json(), query).toEqual({ status: 'misconfigured' });
      }
    });
  });
});
