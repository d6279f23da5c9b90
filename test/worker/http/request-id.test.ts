import { describe, expect, it } from 'vitest';
import {
  errorBody,
  fetchGateway,
  GATEWAY_ORIGIN,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  UUID,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const logs = useCapturedLogs();

// A signed GET the gateway never caches (GET /banks is cached: only its first call arrives).
const ROUTE = '/refunds/count-by-status';

describe('gateway', () => {
  describe('X-Request-Id', () => {
    it('should generate a UUID when the caller sends none', async () => {
      const res = await fetchGateway(gatewayRequest(ROUTE));
      expect(res.headers.get('X-Request-Id')).toMatch(UUID);
    });

    it('should generate a different id for each request', async () => {
      const first = await fetchGateway(gatewayRequest(ROUTE));
      const second = await fetchGateway(gatewayRequest(ROUTE));
      expect(first.headers.get('X-Request-Id')).not.toBe(second.headers.get('X-Request-Id'));
    });

    it('should propagate a sane id from the caller', async () => {
      const id = `caller-req:42/ABC_def.9~${crypto.randomUUID()}`;
      const res = await fetchGateway(gatewayRequest(ROUTE, { requestId: id }));
      expect(res.headers.get('X-Request-Id')).toBe(id);
      expect((await onlySandboxRequest(id)).headers['x-request-id']).toBe(id);
    });

    it('should propagate an id of exactly 128 characters', async () => {
      const id = crypto.randomUUID().padEnd(128, 'a');
      const res = await fetchGateway(gatewayRequest(ROUTE, { requestId: id }));
      expect(res.headers.get('X-Request-Id')).toBe(id);
      expect((await onlySandboxRequest(id)).headers['x-request-id']).toBe(id);
    });

    it.each([
      ['longer than 128 characters', 'a'.repeat(129)],
      ['with a space', 'abc def'],
      ['with a tab', 'abc\tdef'],
      ['with a non-ASCII character', 'abc-é'],
    ])('should replace an id %s with a generated one', async (_, id) => {
      const res = await fetchGateway(gatewayRequest(ROUTE, { requestId: id }));
      const sent = res.headers.get('X-Request-Id');
      expect(sent).toMatch(UUID);
      expect((await onlySandboxRequest(sent ?? '')).headers['x-request-id']).toBe(sent);
    });

    it('should send the id upstream', async () => {
      const id = `trace-upstream-${crypto.randomUUID()}`;
      await fetchGateway(gatewayRequest(ROUTE, { requestId: id }));
      const reached = await onlySandboxRequest(id);
      expect(reached.headers['x-request-id']).toBe(id);
      expect(reached.path).toBe(ROUTE);
    });

    it('should send the generated id upstream', async () => {
      const res = await fetchGateway(gatewayRequest(ROUTE));
      const generated = res.headers.get('X-Request-Id') ?? '';
      expect(generated).toMatch(UUID);
      expect((await onlySandboxRequest(generated)).headers['x-request-id']).toBe(generated);
    });

    it('should answer with exactly its own id, not an appended upstream one', async () => {
      // The sandbox echoes the id it received; the gateway still sets one value only.
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest(ROUTE, { requestId: id }));
      expect(res.status).toBe(200);
      expect(res.headers.get('X-Request-Id')).toBe(id);
    });

    it.each([
      ['a 401', { token: null }, '/banks', 401],
      ['a 404', {}, '/nowhere', 404],
      ['a 405', { method: 'DELETE' }, '/banks', 405],
    ] as const)('should be on %s, repeated in the body', async (_, init, path, status) => {
      const id = uniqueRequestId();
      const res = await fetchGateway(gatewayRequest(path, { ...init, requestId: id }));
      expect(res.status).toBe(status);
      expect(res.headers.get('X-Request-Id')).toBe(id);
      expect((await errorBody(res)).request_id).toBe(id);
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should be on a 503 configuration error, repeated in the body and in the log', async () => {
      const res = await fetchGateway(
        new Request(`${GATEWAY_ORIGIN}/banks`, {
          headers: { Authorization: 'Bearer x', 'X-Request-Id': 'id-500' },
        }),
        { GATEWAY_CALLERS: '{broken' },
      );
      expect(res.status).toBe(503);
      expect(res.headers.get('X-Request-Id')).toBe('id-500');
      expect((await errorBody(res)).request_id).toBe('id-500');
      expect(logs.lines().at(-1)).toMatchObject({
        event: 'request',
        request_id: 'id-500',
        status: 503,
        error_code: 'configuration_error',
      });
    });
  });
});
