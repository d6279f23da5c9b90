/**
 * Contract tests of the sandbox emulator's request log over real HTTP
 * (`GET /__sandbox/requests`): what reached the API, redacted credentials, the
 * `request_id` filter, the 500-entry ring and reset.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectIsoTimestamp } from '../../support/expect-api.ts';
import { paymentBody } from '../../support/payloads.ts';
import { type ApiResponse, type Json, uniqueRef } from '../../support/sandbox-client.ts';
import { useSandboxClient } from '../../support/sandbox-fixture.ts';

const api = useSandboxClient();

/** `GET /__sandbox/requests`, optionally filtered; fails unless it answers 200. */
async function logged(requestId?: string): Promise<Json[]> {
  const query = requestId === undefined ? '' : `?request_id=${encodeURIComponent(requestId)}`;
  const res = await api.control(`requests${query}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.status).toBe('success');
  return res.body.data as Json[];
}

/** The only entry logged under `requestId`. */
async function onlyEntry(requestId: string): Promise<Json> {
  const entries = await logged(requestId);
  expect(entries).toHaveLength(1);
  return entries[0];
}

function withId(requestId: string, headers: Record<string, string> = {}) {
  return { headers: { 'X-Request-Id': requestId, ...headers } };
}

/** Unsigned `GET /banks<query>` (an open endpoint) under `requestId`. */
function getBanks(requestId: string, query = '') {
  return api.call('GET', `/banks${query}`, undefined, { sign: false, ...withId(requestId) });
}

describe('sandbox request log', () => {
  describe('GET /__sandbox/requests', () => {
    it('should record a signed request as received, with the status answered', async () => {
      const id = uniqueRef('log');
      const body = paymentBody();
      const res = await api.call('POST', '/payments/initialize?x=a%20b&y=1', body, withId(id));
      expect(res.status, res.text).toBe(200);
      const entry = await onlyEntry(id);
      expect(entry).toMatchObject({
        method: 'POST',
        path: '/payments/initialize',
        query: 'x=a%20b&y=1',
        body: JSON.stringify(body),
        request_id: id,
        status: 200,
      });
      expect(entry.headers).toMatchObject({
        'content-type': 'application/json',
        'x-key-id': 'sandbox-key',
        'x-request-id': id,
      });
      expect(entry.headers['x-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(entry.headers['x-timestamp']).toMatch(/^\d{10}$/);
      for (const name of Object.keys(entry.headers)) expect(name).toBe(name.toLowerCase());
    });

    it('should stamp received_at with the sandbox clock', async () => {
      await api.advance(86_400);
      const id = uniqueRef('log');
      await getBanks(id);
      const entry = await onlyEntry(id);
      expectIsoTimestamp(entry.received_at);
      const { now } = await api.state();
      expect(Date.parse(entry.received_at)).toBeLessThanOrEqual(Date.parse(now));
      expect(Date.parse(now) - Date.parse(entry.received_at)).toBeLessThan(5_000);
      expect(Date.parse(entry.received_at) - Date.now()).toBeGreaterThan(86_000_000);
    });

    it('should record an empty query and an empty body as empty strings', async () => {
      const id = uniqueRef('log');
      await api.call('GET', `/payments/verify/${uniqueRef('missing')}`, undefined, withId(id));
      expect(await onlyEntry(id)).toMatchObject({ method: 'GET', query: '', body: '' });
    });

    it('should record the generated request id when the caller sent none', async () => {
      const before = (await logged()).length;
      const res = await api.call('GET', '/refunds/count-by-status');
      const generated = res.headers.get('X-Request-Id');
      // The request id rule of the SDK and the gateway: a fresh UUID when none came.
      expect(generated).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const entry = await onlyEntry(generated ?? '');
      expect(entry.path).toBe('/refunds/count-by-status');
      expect((await logged()).length).toBe(before + 1);
    });

    it.each([
      ['an unsigned request to a signed endpoint', 'GET', '/refunds/count-by-status', 401, false],
      ['an unknown path', 'GET', '/api/v1/banks', 404, false],
      ['a wrong method', 'DELETE', '/banks', 405, false],
      ['a validation error', 'POST', '/payments/initialize', 400, true],
    ] as const)('should record %s with its status', async (_, method, path, status, sign) => {
      const id = uniqueRef('log');
      const res = await api.call(method, path, sign ? { email: 'x' } : undefined, {
        sign,
        ...withId(id),
      });
      expect(res.status).toBe(status);
      expect(await onlyEntry(id)).toMatchObject({ method, path, status });
    });

    it('should keep only the entries with exactly the given request_id', async () => {
      const id = uniqueRef('log');
      await getBanks(id);
      await getBanks(`${id}-other`);
      await getBanks(id, '?page=2');
      const entries = await logged(id);
      expect(entries.map((entry) => entry.query)).toEqual(['', 'page=2']);
      expect(await logged(id.slice(0, -1))).toEqual([]);
      expect(await logged(id.toUpperCase())).toEqual([]);
    });

    it('should list every request when no filter is given, oldest first', async () => {
      const first = uniqueRef('log');
      const second = uniqueRef('log');
      await getBanks(first);
      await getBanks(second);
      const ids = (await logged()).map((entry) => entry.request_id);
      expect(ids.slice(-2)).toEqual([first, second]);
    });
  });

  describe('redaction', () => {
    it('should redact Authorization, Proxy-Authorization and Cookie values', async () => {
      const id = uniqueRef('log');
      const secret = 'very-secret-token-value';
      await api.call('GET', '/banks', undefined, {
        sign: false,
        ...withId(id, {
          Authorization: `Bearer ${secret}`,
          'Proxy-Authorization': `Basic ${secret}`,
          Cookie: `session=${secret}`,
        }),
      });
      const res = await api.control(`requests?request_id=${encodeURIComponent(id)}`);
      expect(res.text).not.toContain(secret);
      expect(res.body.data[0].headers).toMatchObject({
        authorization: '<redacted>',
        'proxy-authorization': '<redacted>',
        cookie: '<redacted>',
      });
    });

    it('should keep the signature headers (the sandbox is their own domain)', async () => {
      const id = uniqueRef('log');
      const res = await api.call('GET', '/refunds/count-by-status', undefined, {
        headers: { 'X-Request-Id': id, 'X-Signature': 'f'.repeat(64) },
      });
      expect(res.status).toBe(401);
      expect((await onlyEntry(id)).headers['x-signature']).toBe('f'.repeat(64));
    });
  });

  describe('bodies', () => {
    it('should keep the exact text of the body, including a leading BOM', async () => {
      const id = uniqueRef('log');
      const raw = '\uFEFF{ "email" : "adé@example.com" }  ';
      await api.call('POST', '/banks/resolve', undefined, { rawBody: raw, ...withId(id) });
      expect((await onlyEntry(id)).body).toBe(raw);
    });

    it('should keep only the first 2 KiB, never half a character', async () => {
      const id = uniqueRef('log');
      // 1 + 2 * 1500 bytes: the 2048-byte limit falls inside the 1024th "é".
      const raw = `a${'é'.repeat(1500)}`;
      await api.call('POST', '/banks/resolve', undefined, { rawBody: raw, ...withId(id) });
      const { body } = await onlyEntry(id);
      expect(body).toBe(`a${'é'.repeat(1023)}`);
    });
  });

  describe('what is not logged', () => {
    it('should not record the test controls', async () => {
      const id = uniqueRef('log');
      const res = await fetch(`${api.url}/__sandbox/state`, { headers: { 'X-Request-Id': id } });
      expect(res.status).toBe(200);
      const unknown = await fetch(`${api.url}/__sandbox/nope`, {
        headers: { 'X-Request-Id': id },
      });
      expect(unknown.status).toBe(404);
      expect(await logged(id)).toEqual([]);
    });

    it('should not record the checkout page', async () => {
      const created = await api.call('POST', '/payments/initialize', paymentBody());
      const id = uniqueRef('log');
      const page = await fetch(created.body.authorization_url, {
        headers: { 'X-Request-Id': id },
      });
      expect(page.status).toBe(200);
      expect(await logged(id)).toEqual([]);
    });
  });

  describe('faults', () => {
    afterEach(async () => {
      expect((await api.control('faults', {})).status).toBe(200);
    });

    it('should record an injected 503 with its status', async () => {
      expect((await api.control('faults', { error_rate: 1 })).status).toBe(200);
      const id = uniqueRef('log');
      const res = await getBanks(id);
      expect(res.status).toBe(503);
      expect((await onlyEntry(id)).status).toBe(503);
    });

    it('should record a dropped connection with status null', async () => {
      expect((await api.control('faults', { drop_rate: 1 })).status).toBe(200);
      const id = uniqueRef('log');
      let failure: unknown;
      try {
        await getBanks(id);
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(TypeError);
      expect(await onlyEntry(id)).toMatchObject({ path: '/banks', status: null });
    });
  });

  describe('limits and reset', () => {
    it('should keep the last 500 requests', async () => {
      const prefix = uniqueRef('ring');
      for (let i = 0; i < 505; i++) {
        const res: ApiResponse = await getBanks(`${prefix}-${i}`, `?i=${i}`);
        expect(res.status).toBe(200);
      }
      const entries = await logged();
      expect(entries).toHaveLength(500);
      expect(entries[0].request_id).toBe(`${prefix}-5`);
      expect(entries.at(-1).request_id).toBe(`${prefix}-504`);
      expect(await logged(`${prefix}-4`)).toEqual([]);
    });

    it('should be emptied by POST /__sandbox/reset', async () => {
      await api.call('GET', '/banks', undefined, { sign: false });
      expect((await logged()).length).toBeGreaterThan(0);
      await api.reset();
      expect(await logged()).toEqual([]);
    });
  });
});
