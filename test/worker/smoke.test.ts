import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

describe('smoke', () => {
  it('should run in workerd with D1', async () => {
    const res = await exports.default.fetch('http://x/healthz');
    expect(await res.text()).toBe('ok');
    const row = await env.DB.prepare('SELECT count(*) AS n FROM idempotency_keys').first<{
      n: number;
    }>();
    expect(row?.n).toBe(0);
  });
});
