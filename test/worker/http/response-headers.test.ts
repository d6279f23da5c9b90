/**
 * Headers every gateway answer carries, through the real Worker, KV, D1 and the sandbox
 * upstream: `Cache-Control: no-store` (a proxied 2xx, a KV cache hit and an idempotent
 * replay have none of their own) and `X-Content-Type-Options: nosniff`; under `/console/`
 * the console's security headers too, on the Worker's own answers (a path no static asset
 * matches reaches the Worker).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { CONSOLE_SECURITY_HEADERS } from '../../../worker/http/console-headers.ts';
import { fetchGateway, GATEWAY_ORIGIN, gatewayRequest, postJson } from '../helpers.ts';

/** Asserts the two headers every answer must carry. */
function expectPrivate(response: Response): void {
  expect(response.headers.get('Cache-Control')).toBe('no-store');
  expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff');
}

function transferBody(): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: `hdr-${crypto.randomUUID()}`,
    amount: 12.5,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  };
}

describe('gateway response headers', () => {
  it('should mark a proxied 2xx no-store and nosniff', async () => {
    const response = await fetchGateway(gatewayRequest('/refunds/count-by-status'));
    expect(response.status).toBe(200);
    expectPrivate(response);
  });

  it('should mark a KV cache hit no-store and nosniff', async () => {
    const first = await fetchGateway(gatewayRequest('/banks?country_code=UG'));
    expect(first.status).toBe(200);
    await vi.waitFor(async () => {
      if ((await env.CACHE.get('banks:v1:UG')) === null) throw new Error('not cached yet');
    });
    const hit = await fetchGateway(gatewayRequest('/banks?country_code=UG'));
    expect(hit.headers.get('X-Cache')).toBe('HIT');
    expectPrivate(hit);
  });

  it('should mark an idempotent replay no-store and nosniff', async () => {
    const body = transferBody();
    const key = crypto.randomUUID();
    const keyed = () =>
      postJson('/disbursements/initialize', body, { headers: { 'Idempotency-Key': key } });
    expect((await fetchGateway(keyed())).status).toBe(200);
    const replay = await fetchGateway(keyed());
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expectPrivate(replay);
  });

  it('should mark error answers and the gateway own routes nosniff', async () => {
    expectPrivate(await fetchGateway(new Request(`${GATEWAY_ORIGIN}/refunds/count-by-status`)));
    expectPrivate(await fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz`)));
    expectPrivate(await fetchGateway(new Request(`${GATEWAY_ORIGIN}/openapi.json`)));
  });

  it('should put the console security headers on the Worker answers under /console/', async () => {
    for (const path of ['/console', '/console/', '/console/missing.js', '/console/assets/x.css']) {
      const response = await fetchGateway(new Request(`${GATEWAY_ORIGIN}${path}`));
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) {
        expect(response.headers.get(name), `${path} ${name}`).toBe(value);
      }
    }
  });

  it('should not put the console headers on answers outside /console/', async () => {
    const response = await fetchGateway(new Request(`${GATEWAY_ORIGIN}/consoles`));
    expect(response.headers.get('Content-Security-Policy')).toBeNull();
    expect(response.headers.get('X-Frame-Options')).toBeNull();
  });
});
