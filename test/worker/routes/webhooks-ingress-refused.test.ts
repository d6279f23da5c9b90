/**
 * `POST /webhooks`, the relay's ingress, refused requests: 401 for a
 * bad signature, 400/415/413 for bad bodies, 500 when D1 fails; never a stored row.
 */
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/signing.ts';
import { errorBody, fetchGateway, gatewayRequest, useCapturedLogs } from '../helpers.ts';
import { envelope, rowCount, unixNow, WEBHOOK_SECRET, webhookRequest } from './webhook-helpers.ts';

const logs = useCapturedLogs();

describe('webhooks', () => {
  describe('POST /webhooks', () => {
    const cases: [string, (body: string) => Promise<Request>][] = [
      ['a forged signature', (body) => webhookRequest(body, { secret: 'not-the-secret' })],
      [
        'a tampered body',
        (body) => webhookRequest(body, { sentBody: body.replace('5000', '5001') }),
      ],
      [
        'a stale timestamp (301 s ago)',
        (body) => webhookRequest(body, { timestamp: unixNow() - 301 }),
      ],
      [
        'a future timestamp (301 s ahead)',
        (body) => webhookRequest(body, { timestamp: unixNow() + 301 }),
      ],
      ['missing signature headers', (body) => webhookRequest(body, { secret: null })],
      [
        'a malformed signature',
        (body) => webhookRequest(body, { headers: { 'X-Signature': 'zz' } }),
      ],
    ];

    it.each(cases)('should answer 401 and store nothing for %s', async (_, build) => {
      const event = envelope();
      const res = await fetchGateway(await build(JSON.stringify(event)));
      expect(res.status).toBe(401);
      const error = await errorBody(res);
      expect(error).toMatchObject({ status: 'error', code: 'invalid_signature' });
      expect(error.request_id).toBe(res.headers.get('X-Request-Id'));
      expect(await rowCount(String(event.event_id))).toBe(0);
    });

    it('should accept a timestamp within the 300 s tolerance', async () => {
      const event = envelope();
      const request = await webhookRequest(JSON.stringify(event), { timestamp: unixNow() - 290 });
      expect((await fetchGateway(request)).status).toBe(200);
      expect(await rowCount(String(event.event_id))).toBe(1);
    });

    it("should refuse the relay's own event types and id forms, and store nothing", async () => {
      // Stored first, such an event would shadow the relay's alert, or stop it being stored.
      const cases = [
        [envelope({ event_type: 'relay.backlog' }), ['event_type']],
        [envelope({ event_id: 'relay.backlog:2026-12-07T22:00:00.000Z' }), ['event_id']],
        [
          envelope({
            event_type: 'subscription.disabled',
            event_id: 'subscription.disabled:sub_1:2026-12-07T22:00:00.000Z',
          }),
          ['event_type', 'event_id'],
        ],
      ] as const;
      for (const [event, paths] of cases) {
        const res = await fetchGateway(await webhookRequest(JSON.stringify(event)));
        expect(res.status).toBe(400);
        const error = await errorBody(res);
        expect(error.code).toBe('validation_failed');
        expect(error.issues?.map((issue) => issue.path)).toEqual(paths);
        expect(error.issues?.[0]?.message).toMatch(/kept for the relay's own events/);
        expect(await rowCount(String(event.event_id))).toBe(0);
      }
      // A name that only resembles one is the provider's to use.
      const similar = envelope({ event_type: 'relay.backlogged', event_id: 'relay.backlog-1' });
      expect((await fetchGateway(await webhookRequest(JSON.stringify(similar)))).status).toBe(200);
    });

    it('should answer 400 listing every envelope issue with its path', async () => {
      const event = envelope({ event_id: undefined, status: 7, data: [1], timestamp: '' });
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)));
      expect(res.status).toBe(400);
      const error = await errorBody(res);
      expect(error.code).toBe('validation_failed');
      expect(error.issues?.map((issue) => issue.path).sort()).toEqual([
        'data',
        'event_id',
        'status',
        'timestamp',
      ]);
      expect(error.issues?.find((issue) => issue.path === 'event_id')?.message).toBe('Required');
    });

    it.each([
      ['malformed JSON', '{"event_id": '],
      ['a JSON array', '[]'],
    ])('should answer 400 at the root for %s', async (_, body) => {
      const res = await fetchGateway(await webhookRequest(body));
      expect(res.status).toBe(400);
      const error = await errorBody(res);
      expect(error).toMatchObject({ code: 'validation_failed', issues: [{ path: '' }] });
    });

    it('should answer 400 to a body that is not valid UTF-8', async () => {
      const body = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]);
      const signature = await signRequest({ keyId: 'sandbox-key', secret: WEBHOOK_SECRET, body });
      const request = gatewayRequest('/webhooks', {
        token: null,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...signature },
        body,
      });
      const res = await fetchGateway(request);
      expect(res.status).toBe(400);
      expect(await errorBody(res)).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: '' }],
      });
    });

    it('should answer 415 to a body that is not JSON and store nothing', async () => {
      const event = envelope();
      const request = await webhookRequest(JSON.stringify(event), {
        headers: { 'Content-Type': 'text/plain' },
      });
      const res = await fetchGateway(request);
      expect(res.status).toBe(415);
      expect((await errorBody(res)).code).toBe('unsupported_media_type');
      expect(await rowCount(String(event.event_id))).toBe(0);
    });

    it('should answer 413 to a body over 256 KiB (WEBHOOK_MAX_BODY_BYTES)', async () => {
      const event = envelope({ data: { padding: 'x'.repeat(262_144) } });
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)));
      expect(res.status).toBe(413);
      expect((await errorBody(res)).code).toBe('payload_too_large');
      expect(await rowCount(String(event.event_id))).toBe(0);
    });

    it('should answer 413 to a streamed body without Content-Length over WEBHOOK_MAX_BODY_BYTES', async () => {
      const chunk = new TextEncoder().encode('x'.repeat(64));
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(chunk);
        },
      });
      const request = gatewayRequest('/webhooks', {
        token: null,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: stream,
      });
      expect(request.headers.get('Content-Length')).toBeNull();
      const res = await fetchGateway(request, { WEBHOOK_MAX_BODY_BYTES: '1000' });
      expect(res.status).toBe(413);
    });

    it('should answer 500 internal_error and no 200 when D1 fails', async () => {
      const failing = {
        prepare: () => ({
          bind: () => ({ run: () => Promise.reject(new Error('D1_ERROR: storage down')) }),
        }),
      } as unknown as D1Database;
      const event = envelope();
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)), { DB: failing });
      expect(res.status).toBe(500);
      expect((await errorBody(res)).code).toBe('internal_error');
      const failure = logs.lines().find((line) => line.event === 'webhook_store_failed');
      expect(failure).toMatchObject({ level: 'error', event_id: event.event_id });
    });

    it('should answer 405 to a GET', async () => {
      const res = await fetchGateway(gatewayRequest('/webhooks', { token: null }));
      expect(res.status).toBe(405);
    });
  });
});
