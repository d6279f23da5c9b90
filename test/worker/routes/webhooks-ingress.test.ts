/**
 * `POST /webhooks`, the relay's ingress, accepted events: through the
 * real Worker with the real D1 of miniflare. Every test uses its own event ids.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/signing.ts';
import { createSandbox } from '../../../lib/testing/index.ts';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { errorBody, fetchGateway, useCapturedLogs } from '../helpers.ts';
import { envelope, rowCount, WEBHOOK_SECRET, webhookRequest } from './webhook-helpers.ts';

const logs = useCapturedLogs();

describe('webhooks', () => {
  describe('POST /webhooks', () => {
    it('should store a signed event byte-identically and answer duplicate:false', async () => {
      const event = envelope();
      const body = `{ "event_type": "charge_success",\n  "event_id": "${event.event_id}", "timestamp": "t", "data": {"note": "caf\u00e9"} }\n`;
      const res = await fetchGateway(await webhookRequest(body));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        status: 'success',
        event_id: event.event_id,
        duplicate: false,
      });
      const stored = await findWebhookEvent(env.DB, String(event.event_id));
      expect(stored?.eventType).toBe('charge_success');
      expect(stored?.status).toBe('received');
      expect(new TextEncoder().encode(stored?.rawBody)).toEqual(new TextEncoder().encode(body));
    });

    it('should answer duplicate:true to the same event again and keep one row', async () => {
      const body = JSON.stringify(envelope());
      const first = await fetchGateway(await webhookRequest(body));
      const second = await fetchGateway(await webhookRequest(body));
      const eventId = JSON.parse(body).event_id as string;
      expect(await first.json()).toMatchObject({ duplicate: false });
      expect(second.status).toBe(200);
      expect(await second.json()).toEqual({
        status: 'success',
        event_id: eventId,
        duplicate: true,
      });
      expect(await rowCount(eventId)).toBe(1);
    });

    it('should store a storm of 10 concurrent deliveries once, with one duplicate:false', async () => {
      const body = JSON.stringify(envelope());
      const eventId = JSON.parse(body).event_id as string;
      const responses = await Promise.all(
        Array.from({ length: 10 }, async () => fetchGateway(await webhookRequest(body))),
      );
      const answers = (await Promise.all(responses.map((res) => res.json()))) as {
        duplicate: boolean;
      }[];
      expect(responses.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);
      expect(await rowCount(eventId)).toBe(1);
    });

    it('should need no bearer token and log the caller as null', async () => {
      const body = JSON.stringify(envelope());
      const res = await fetchGateway(await webhookRequest(body));
      expect(res.status).toBe(200);
      const line = logs.lines().find((entry) => entry.event === 'request');
      expect(line).toMatchObject({
        caller: null,
        method: 'POST',
        route: 'webhooks.ingest',
        status: 200,
        error_code: null,
      });
      expect(logs.text()).not.toContain(WEBHOOK_SECRET);
    });

    it('should refuse webhooks (503, logged) when WEBHOOK_SECRET is empty and unsigned ones are not allowed', async () => {
      for (const allow of [undefined, '', 'false', 'no']) {
        const event = envelope();
        const res = await fetchGateway(
          await webhookRequest(JSON.stringify(event), { secret: null }),
          {
            WEBHOOK_SECRET: '',
            ...(allow === undefined ? {} : { ALLOW_UNSIGNED_WEBHOOKS: allow }),
          },
        );
        expect(res.status, `ALLOW_UNSIGNED_WEBHOOKS=${allow}`).toBe(503);
        const error = await errorBody(res);
        expect(error).toMatchObject({ code: 'configuration_error' });
        expect(error.message).toContain('WEBHOOK_SECRET');
        expect(await rowCount(String(event.event_id))).toBe(0);
      }
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          event: 'configuration_error',
          setting: 'WEBHOOK_SECRET',
        }),
      );
    });

    it('should accept an unsigned event with ALLOW_UNSIGNED_WEBHOOKS=true, logging a warning', async () => {
      const event = envelope();
      const res = await fetchGateway(
        await webhookRequest(JSON.stringify(event), { secret: null }),
        { WEBHOOK_SECRET: '', ALLOW_UNSIGNED_WEBHOOKS: 'true' },
      );
      expect(res.status).toBe(200);
      expect(await rowCount(String(event.event_id))).toBe(1);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          event: 'webhook_unsigned_accepted',
          event_id: event.event_id,
        }),
      );
    });

    it.each([
      ['a newline', 'evt\n1'],
      ['a space', 'evt 1'],
      ['a tab', 'evt\t1'],
      ['a non-ASCII letter', 'évt-1'],
      ['256 characters', 'e'.repeat(256)],
      ['nothing', ''],
    ])('should refuse an event_id with %s (400, nothing stored)', async (_name, eventId) => {
      const event = { ...envelope(), event_id: eventId };
      const res = await fetchGateway(await webhookRequest(JSON.stringify(event)));
      expect(res.status).toBe(400);
      expect((await errorBody(res)).issues).toEqual([
        { path: 'event_id', message: expect.stringMatching(/visible ASCII/) },
      ]);
      expect(await rowCount(eventId)).toBe(0);
    });

    it('should accept an event_id of 255 visible ASCII characters', async () => {
      const eventId = `evt-${'~'.repeat(251)}`;
      const res = await fetchGateway(
        await webhookRequest(JSON.stringify({ ...envelope(), event_id: eventId })),
      );
      expect(res.status).toBe(200);
      expect(await rowCount(eventId)).toBe(1);
    });

    it('should accept an event emitted by the sandbox (end to end)', async () => {
      const sandbox = createSandbox({
        webhookUrl: 'http://gateway.test/webhooks',
        fetch: (input, init) => fetchGateway(new Request(input, init)),
      });
      const body = JSON.stringify({ email: 'ada@example.com', amount: '5000.00', currency: 'NGN' });
      const headers = await signRequest({ keyId: 'sandbox-key', secret: WEBHOOK_SECRET, body });
      const init = await sandbox.fetch(
        new Request('http://sandbox.test/payments/initialize', {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body,
        }),
      );
      expect(init.status).toBe(200);
      const { reference } = (await init.json()) as { reference: string };
      const complete = await sandbox.fetch(
        new Request(`http://sandbox.test/__sandbox/payments/${reference}/complete`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ outcome: 'success' }),
        }),
      );
      expect(complete.status).toBe(200);
      await sandbox.tick();
      const log = await sandbox.fetch(new Request('http://sandbox.test/__sandbox/webhooks'));
      const webhooks = ((await log.json()) as { data: SandboxWebhook[] }).data;
      const charge = webhooks.find((webhook) => webhook.event_type === 'charge_success');
      expect(charge).toMatchObject({ delivery: 'delivered', response_status: 200 });
      const stored = await findWebhookEvent(env.DB, charge?.event_id ?? '');
      expect(stored?.rawBody).toBe(JSON.stringify(charge?.body));
    });
  });
});

interface SandboxWebhook {
  event_id: string;
  event_type: string;
  body: unknown;
  delivery: string;
  response_status?: number;
}
