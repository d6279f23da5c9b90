/**
 * The webhook ingress's per-address rate limit (`WEBHOOK_RATE_LIMIT_PER_MINUTE`), through
 * the real Worker, its real rate limiter Durable Object and D1: over the limit a client
 * gets 429 `rate_limited` with `Retry-After` before its body is read or stored, and other
 * addresses are not affected. Each test uses addresses of its own, so the limiter objects
 * start empty.
 */
import { describe, expect, it } from 'vitest';
import { errorBody, fetchGateway, useCapturedLogs } from '../helpers.ts';
import { envelope, rowCount, webhookRequest } from './webhook-helpers.ts';

useCapturedLogs();

const LIMIT = { WEBHOOK_RATE_LIMIT_PER_MINUTE: '3' } as const;

/** A random address of 198.51.100.0/24 (TEST-NET-2) or of 2001:db8::/32, by family. */
function address(family: 4 | 6): string {
  const random = () => Math.floor(Math.random() * 65_536);
  return family === 4
    ? `198.51.${random() % 256}.${random() % 256}`
    : `2001:db8:${random().toString(16)}:${random().toString(16)}::1`;
}

/** Posts one new signed event from `from`; returns the response and the event id. */
async function post(from: string): Promise<{ res: Response; eventId: string }> {
  const event = envelope();
  const request = await webhookRequest(JSON.stringify(event), {
    headers: { 'CF-Connecting-IP': from },
  });
  return { res: await fetchGateway(request, LIMIT), eventId: String(event.event_id) };
}

describe('POST /webhooks rate limit', () => {
  it('should refuse a client over its limit with 429 and Retry-After, storing nothing', async () => {
    const client = address(4);
    for (let index = 0; index < 3; index += 1) {
      expect((await post(client)).res.status).toBe(200);
    }
    const over = await post(client);
    expect(over.res.status).toBe(429);
    expect(Number(over.res.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    expect((await errorBody(over.res)).code).toBe('rate_limited');
    expect(await rowCount(over.eventId)).toBe(0);
  });

  it('should count each client address apart, and an IPv6 /64 as one client', async () => {
    const busy = address(6);
    for (let index = 0; index < 3; index += 1) {
      expect((await post(busy)).res.status).toBe(200);
    }
    // Another address in the same /64 is the same client.
    expect((await post(busy.replace(/::1$/, '::2'))).res.status).toBe(429);
    expect((await post(address(4))).res.status).toBe(200);
    expect((await post(address(6))).res.status).toBe(200);
  });

  it('should not count anything when the limit is 0', async () => {
    const client = address(4);
    for (let index = 0; index < 5; index += 1) {
      const event = envelope();
      const request = await webhookRequest(JSON.stringify(event), {
        headers: { 'CF-Connecting-IP': client },
      });
      const res = await fetchGateway(request, { WEBHOOK_RATE_LIMIT_PER_MINUTE: '0' });
      expect(res.status).toBe(200);
    }
  });
});
