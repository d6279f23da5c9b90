import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { errorBody, GATEWAY_ORIGIN, UUID, useCapturedLogs } from './helpers.ts';

useCapturedLogs();

describe('gateway', () => {
  describe('GET /healthz', () => {
    it('should answer 200 { status: "ok" } without a token', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`);
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual({ status: 'ok' });
    });

    it('should carry a generated X-Request-Id', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`);
      expect(res.headers.get('X-Request-Id')).toMatch(UUID);
    });

    it('should ignore a wrong token', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`, {
        headers: { Authorization: 'Bearer nope' },
      });
      expect(res.status).toBe(200);
    });

    it('should answer 405 with Allow: GET to a POST', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.get('Allow')).toBe('GET');
      expect((await errorBody(res)).code).toBe('method_not_allowed');
    });
  });
});
