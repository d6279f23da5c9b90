import { describe, expect, it } from 'vitest';
import { compileAllowList } from '../../../worker/auth/allow-list.ts';
import {
  errorBody,
  expectConfigurationError,
  fetchGateway,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const logs = useCapturedLogs();

/** `GATEWAY_CALLERS` with a reporting caller limited to `routes` and an unrestricted one. */
function callers(routes: unknown): Partial<Env> {
  return {
    GATEWAY_CALLERS: JSON.stringify([
      { name: 'reporting', token: 'reporting-token', routes },
      { name: 'backend', token: 'backend-token' },
    ]),
  };
}

/** A signed GET the sandbox answers 200 (route `refunds.countByStatus`). */
function countRefunds(token: string, requestId: string): Request {
  return gatewayRequest('/refunds/count-by-status', { token, requestId });
}

describe('gateway', () => {
  describe('caller allow-lists', () => {
    it('should answer 403 forbidden outside the allow-list, without calling the upstream', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(countRefunds('reporting-token', id), callers(['banks.list']));
      expect(res.status).toBe(403);
      expect(await errorBody(res)).toEqual({
        status: 'error',
        message: 'This caller may not use refunds.countByStatus',
        code: 'forbidden',
        request_id: id,
      });
      expect(await sandboxRequests(id)).toEqual([]);
      expect(logs.lines().at(-1)).toMatchObject({
        event: 'request',
        caller: 'reporting',
        route: 'refunds.countByStatus',
        status: 403,
        error_code: 'forbidden',
        upstream_status: null,
      });
    });

    it('should let a listed route through', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        countRefunds('reporting-token', id),
        callers(['banks.list', 'refunds.countByStatus']),
      );
      expect(res.status).toBe(200);
      expect(await onlySandboxRequest(id)).toMatchObject({ path: '/refunds/count-by-status' });
    });

    it('should refuse before validation, so a forbidden caller learns nothing of the body rules', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/payments/initialize', {
          method: 'POST',
          token: 'reporting-token',
          requestId: id,
          headers: { 'Content-Type': 'application/json' },
          body: '{"not":"valid"',
        }),
        callers(['refunds.*']),
      );
      expect(res.status).toBe(403);
      expect((await errorBody(res)).code).toBe('forbidden');
    });

    it('should let a caller without routes use every route', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(countRefunds('backend-token', id), callers(['banks.list']));
      expect(res.status).toBe(200);
      expect(await sandboxRequests(id)).toHaveLength(1);
    });

    it('should allow every route under a prefix wildcard, and nothing else', async () => {
      const env = callers(['refunds.*']);
      const allowed = await fetchGateway(countRefunds('reporting-token', uniqueRequestId()), env);
      expect(allowed.status).toBe(200);
      const refused = await fetchGateway(
        gatewayRequest('/merchants/transactions', { token: 'reporting-token' }),
        env,
      );
      expect(refused.status).toBe(403);
    });

    it('should allow every route with * alone', async () => {
      const res = await fetchGateway(
        countRefunds('reporting-token', uniqueRequestId()),
        callers(['*']),
      );
      expect(res.status).toBe(200);
    });

    it('should allow nothing with an empty list', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(countRefunds('reporting-token', id), callers([]));
      expect(res.status).toBe(403);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it.each([
      ['a pattern with a wildcard inside', ['pay*.list']],
      ['a bare prefix wildcard', ['payments*']],
      ['a pattern that is not a string', [42]],
      ['routes that are not a list', 'banks.list'],
    ])('should answer 503 configuration_error for %s', async (_, routes) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(countRefunds('reporting-token', id), callers(routes));
      await expectConfigurationError(res, ['GATEWAY_CALLERS']);
      expect(await sandboxRequests(id)).toEqual([]);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'config_invalid', setting: 'GATEWAY_CALLERS' }),
      );
    });

    it('should answer 503 configuration_error when two callers share a name', async () => {
      const res = await fetchGateway(countRefunds('a-token', uniqueRequestId()), {
        GATEWAY_CALLERS: JSON.stringify([
          { name: 'same', token: 'a-token' },
          { name: 'same', token: 'b-token' },
        ]),
      });
      await expectConfigurationError(res, ['GATEWAY_CALLERS']);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          event: 'config_invalid',
          problem: expect.stringContaining('two callers share a name'),
        }),
      );
    });

    it('should warn once about a pattern that matches no route, and still refuse', async () => {
      const env = callers(['payment.*']);
      for (let i = 0; i < 2; i++) {
        const res = await fetchGateway(countRefunds('reporting-token', uniqueRequestId()), env);
        expect(res.status).toBe(403);
      }
      const warnings = logs.lines().filter((line) => line.event === 'config_warning');
      expect(warnings).toEqual([
        {
          level: 'warn',
          event: 'config_warning',
          setting: 'GATEWAY_CALLERS',
          caller: 'reporting',
          problem: 'route pattern payment.* matches no route',
        },
      ]);
    });
  });

  describe('compileAllowList', () => {
    it('should match exact names, prefixes at any depth, and not a longer first segment', () => {
      const list = compileAllowList(['banks.list', 'directDebits.*']);
      expect(list.allows('banks.list')).toBe(true);
      expect(list.allows('banks.resolve')).toBe(false);
      expect(list.allows('directDebits.mandates.create')).toBe(true);
      expect(list.allows('directDebitsAdmin.list')).toBe(false);
      expect(list.allows('directDebits')).toBe(false);
    });
  });
});
