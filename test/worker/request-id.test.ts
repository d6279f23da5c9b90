import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CapturedLogs,
  captureLogs,
  errorBody,
  fetchThrough,
  fetchWithEnv,
  GATEWAY_ORIGIN,
  gatewayRequest,
  recordingUpstream,
  UUID,
} from './helpers.ts';

let logs: CapturedLogs;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('gateway', () => {
  describe('X-Request-Id', () => {
    it('should generate a UUID when the caller sends none', async () => {
      const res = await fetchThrough(recordingUpstream(), gatewayRequest('/banks'));
      expect(res.headers.get('X-Request-Id')).toMatch(UUID);
    });

    it('should generate a different id for each request', async () => {
      const upstream = recordingUpstream();
      const first = await fetchThrough(upstream, gatewayRequest('/banks'));
      const second = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(first.headers.get('X-Request-Id')).not.toBe(second.headers.get('X-Request-Id'));
    });

    it('should propagate a sane id from the caller', async () => {
      const id = 'caller-req:42/ABC_def.9';
      const res = await fetchThrough(
        recordingUpstream(),
        gatewayRequest('/banks', { headers: { 'X-Request-Id': id } }),
      );
      expect(res.headers.get('X-Request-Id')).toBe(id);
    });

    it('should propagate an id of exactly 128 characters', async () => {
      const id = 'a'.repeat(128);
      const res = await fetchThrough(
        recordingUpstream(),
        gatewayRequest('/banks', { headers: { 'X-Request-Id': id } }),
      );
      expect(res.headers.get('X-Request-Id')).toBe(id);
    });

    it.each([
      ['longer than 128 characters', 'a'.repeat(129)],
      ['with a space', 'abc def'],
      ['with a tab', 'abc\tdef'],
      ['with a non-ASCII character', 'abc-é'],
    ])('should replace an id %s with a generated one', async (_, id) => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(
        upstream,
        gatewayRequest('/banks', { headers: { 'X-Request-Id': id } }),
      );
      const sent = res.headers.get('X-Request-Id');
      expect(sent).toMatch(UUID);
      expect(upstream.only().request.headers.get('X-Request-Id')).toBe(sent);
    });

    it('should send the id upstream', async () => {
      const upstream = recordingUpstream();
      await fetchThrough(
        upstream,
        gatewayRequest('/banks', { headers: { 'X-Request-Id': 'trace-upstream-1' } }),
      );
      expect(upstream.only().request.headers.get('X-Request-Id')).toBe('trace-upstream-1');
    });

    it('should send the generated id upstream', async () => {
      const upstream = recordingUpstream();
      const res = await fetchThrough(upstream, gatewayRequest('/banks'));
      expect(upstream.only().request.headers.get('X-Request-Id')).toBe(
        res.headers.get('X-Request-Id'),
      );
    });

    it('should override the id the upstream answers with', async () => {
      const upstream = recordingUpstream(() =>
        Response.json({ status: 'success' }, { headers: { 'X-Request-Id': 'upstream-own-id' } }),
      );
      const res = await fetchThrough(
        upstream,
        gatewayRequest('/banks', { headers: { 'X-Request-Id': 'mine' } }),
      );
      expect(res.headers.get('X-Request-Id')).toBe('mine');
    });

    it.each([
      ['a 401', gatewayRequest('/banks', { token: null }), 401],
      ['a 404', gatewayRequest('/nowhere'), 404],
      ['a 405', gatewayRequest('/banks', { method: 'DELETE' }), 405],
    ])('should be on %s, repeated in the body', async (_, request, status) => {
      request.headers.set('X-Request-Id', `id-${status}`);
      const res = await fetchThrough(recordingUpstream(), request);
      expect(res.status).toBe(status);
      expect(res.headers.get('X-Request-Id')).toBe(`id-${status}`);
      expect((await errorBody(res)).request_id).toBe(`id-${status}`);
    });

    it('should be on a 500, repeated in the body and in the log', async () => {
      const res = await fetchWithEnv(
        new Request(`${GATEWAY_ORIGIN}/banks`, {
          headers: { Authorization: 'Bearer x', 'X-Request-Id': 'id-500' },
        }),
        { GATEWAY_CALLERS: '{broken' },
      );
      expect(res.status).toBe(500);
      expect(res.headers.get('X-Request-Id')).toBe('id-500');
      expect((await errorBody(res)).request_id).toBe('id-500');
      expect(logs.lines().at(-1)).toMatchObject({
        event: 'request',
        request_id: 'id-500',
        status: 500,
        error_code: 'internal_error',
      });
    });
  });
});
