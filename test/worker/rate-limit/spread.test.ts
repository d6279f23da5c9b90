/**
 * A limit larger than one rate limiter object should serve (`RATE_LIMIT_PER_OBJECT_PER_MINUTE`),
 * spread over several real Durable Objects whose shares add up to it, through the real
 * Worker: per caller on the proxy, per client address on the webhook ingress. The admin
 * sign-in throttle stays one exact object per budget whatever the setting. Each test runs
 * on a private set of limiter objects that lists the gateway's calls
 * (test/worker/rate-limit/limiter-bindings.ts): which object was asked, with which limit.
 */
import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../../worker/config.ts';
import { ADMIN_FAILURES_PER_MINUTE } from '../../../worker/rate-limit/admin-failures.ts';
import { LOCAL_VARS, PRODUCTION_VARS } from '../config-fixtures.ts';
import {
  errorBody,
  expectConfigurationError,
  fetchGateway,
  gatewayRequest,
  useCapturedLogs,
} from '../helpers.ts';
import { adminRequest } from '../routes/admin/admin-helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import { faultyLimiter, type LimiterCall, recordingLimiter } from './limiter-bindings.ts';

const logs = useCapturedLogs();

/** Bindings with one fresh caller, the two limits, and `limiter` as `RATE_LIMITER`. */
function callerEnv(
  limit: string,
  perObject: string,
  limiter: Env['RATE_LIMITER'],
  name = `busy-${crypto.randomUUID()}`,
): { env: Partial<Env>; name: string } {
  const env = {
    RATE_LIMIT_PER_MINUTE: limit,
    RATE_LIMIT_PER_OBJECT_PER_MINUTE: perObject,
    GATEWAY_CALLERS: JSON.stringify([{ name, token: `${name}-token` }]),
    RATE_LIMITER: limiter,
  } as unknown as Partial<Env>;
  return { env, name };
}

/** A signed GET the sandbox answers 200, as `caller`. */
function countRefunds(caller: string): Request {
  return gatewayRequest('/refunds/count-by-status', { token: `${caller}-token` });
}

/** Each object asked, with the limits it was asked with and how many times. */
function byObject(calls: readonly LimiterCall[]): Record<string, { limit: number; takes: number }> {
  const objects: Record<string, { limit: number; takes: number }> = {};
  for (const { name, limit } of calls) {
    const seen = objects[name];
    if (seen !== undefined && seen.limit !== limit) throw new Error(`${name}: two limits`);
    objects[name] = { limit, takes: (seen?.takes ?? 0) + 1 };
  }
  return objects;
}

/** How many of `responses` have each status. */
function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('gateway', () => {
  describe('rate limiting over several limiter objects', () => {
    it('should spread a caller over objects whose shares add up to its limit, and refuse past the whole limit', async () => {
      const limiter = recordingLimiter();
      const { env, name } = callerEnv('11', '5', limiter.binding);
      const responses: Response[] = [];
      for (let i = 0; i < 33; i++) responses.push(await fetchGateway(countRefunds(name), env));
      // 11 a minute over objects of at most 5: three, of 4, 4 and 3, each dealt 11 requests in
      // turn and asked until its first refusal, which the isolate then answers itself.
      expect(byObject(limiter.calls())).toEqual({
        [`caller/${name}/1-of-3`]: { limit: 4, takes: 5 },
        [`caller/${name}/2-of-3`]: { limit: 4, takes: 5 },
        [`caller/${name}/3-of-3`]: { limit: 3, takes: 4 },
      });
      // The first refill of a share comes 15 s after its burst: none within this run.
      expect(tally(responses.map((res) => res.status))).toEqual({ 200: 11, 429: 22 });
      const refused = responses.find((res) => res.status === 429);
      // The wait of the object asked, at most one of its intervals (15 s at 4 a minute, 20 s
      // at 3), longer than one object of the whole limit would answer (60 s / 11 = 5.5 s).
      const retryAfter = Number(refused?.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThan(6);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(await errorBody(refused as Response)).toMatchObject({
        code: 'rate_limited',
        message: expect.stringMatching(/^Too many requests: the limit is 11 per minute; retry in/),
      });
    });

    it('should keep a limit that fits in one object in one object, asked with the whole limit', async () => {
      const limiter = recordingLimiter();
      const { env, name } = callerEnv('5', '5', limiter.binding);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++)
        statuses.push((await fetchGateway(countRefunds(name), env)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(byObject(limiter.calls())).toEqual({ [`caller/${name}`]: { limit: 5, takes: 6 } });
    });

    it("should answer a refused object's next requests itself until the wait it gave is over", async () => {
      const limiter = recordingLimiter();
      const { env, name } = callerEnv('2', '30000', limiter.binding);
      const responses: Response[] = [];
      for (let i = 0; i < 6; i++) responses.push(await fetchGateway(countRefunds(name), env));
      expect(responses.map((res) => res.status)).toEqual([200, 200, 429, 429, 429, 429]);
      // Asked twice for the allowed requests and once for the first refusal: the object's
      // schedule only moves later, so its wait (30 s at 2 a minute) holds for the others.
      expect(byObject(limiter.calls())).toEqual({ [`caller/${name}`]: { limit: 2, takes: 3 } });
      const waits = responses.slice(2).map((res) => Number(res.headers.get('Retry-After')));
      expect(waits[0]).toBe(30);
      for (const wait of waits.slice(1)) {
        expect(wait).toBeGreaterThanOrEqual(1);
        expect(wait).toBeLessThanOrEqual(30);
      }
      expect(await errorBody(responses[5] as Response)).toMatchObject({
        code: 'rate_limited',
        message: expect.stringMatching(/^Too many requests: the limit is 2 per minute; retry in/),
      });
    });

    it('should let a request in and log it when its object fails, the other objects still counting', async () => {
      const limiter = faultyLimiter({ method: 'take', failOn: /\/2-of-2$/ });
      const { env, name } = callerEnv('4', '2', limiter.binding);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await fetchGateway(countRefunds(name), env)).status);
      // Half the requests reach the failing object and go on; the other half share 2 a minute.
      expect(limiter.injected()).toBe(4);
      expect(tally(statuses)).toEqual({ 200: 6, 429: 2 });
      expect(logs.lines().filter((line) => line.event === 'rate_limiter_failed')).toHaveLength(4);
    });

    it("should keep a caller's count apart from the admin sign-in budgets, whatever its name", async () => {
      const limiter = recordingLimiter();
      const { env, name } = callerEnv('1', '5', limiter.binding, 'admin-failures/global');
      expect((await fetchGateway(countRefunds(name), env)).status).toBe(200);
      // A full minute of the caller's 1 a minute, counted in an object of its own.
      const signIn = adminRequest('GET', '/admin/subscriptions', { token: 'a-wrong-guess' });
      expect((await fetchGateway(signIn, env)).status).toBe(401);
      expect(Object.keys(byObject(limiter.calls()))).toContain('caller/admin-failures/global');
    });

    it('should refuse everything (503) with an invalid RATE_LIMIT_PER_OBJECT_PER_MINUTE', async () => {
      const { env, name } = callerEnv('600', '0', recordingLimiter().binding);
      await expectConfigurationError(await fetchGateway(countRefunds(name), env), [
        'RATE_LIMIT_PER_OBJECT_PER_MINUTE',
      ]);
    });
  });

  describe('RATE_LIMIT_PER_OBJECT_PER_MINUTE', () => {
    /** The problem with `value` on top of `base`, or `undefined` when it is accepted. */
    const problemWith = (value: string, base: typeof LOCAL_VARS) => {
      const loaded = parseSettings({ ...base, RATE_LIMIT_PER_OBJECT_PER_MINUTE: value });
      if (loaded.ok) return loaded.settings.rateLimitPerObjectPerMinute;
      return loaded.problems.find((p) => p.variable === 'RATE_LIMIT_PER_OBJECT_PER_MINUTE')
        ?.problem;
    };

    it('should read 30,000 when unset, and refuse below 1,000 outside local mode only', () => {
      expect(problemWith('', PRODUCTION_VARS)).toBe(30_000);
      expect(problemWith('1000', PRODUCTION_VARS)).toBe(1000);
      expect(problemWith('999', PRODUCTION_VARS)).toBe(
        'must be at least 1000 outside local mode (unset for 30000)',
      );
      expect(problemWith('1', LOCAL_VARS)).toBe(1);
    });

    it("should refuse 0 and more than 60,000 (one object's documented rate) in every mode", () => {
      for (const base of [LOCAL_VARS, PRODUCTION_VARS]) {
        for (const value of ['0', '60001', 'lots']) {
          expect(problemWith(value, base)).toBe(
            'expected a whole number of requests from 1 to 60000',
          );
        }
        expect(problemWith('60000', base)).toBe(60_000);
      }
    });
  });

  describe('POST /webhooks rate limit over several limiter objects', () => {
    it('should spread one address over objects and refuse past its whole limit, other addresses apart', async () => {
      const limiter = recordingLimiter();
      const env = {
        WEBHOOK_RATE_LIMIT_PER_MINUTE: '6',
        RATE_LIMIT_PER_OBJECT_PER_MINUTE: '3',
        RATE_LIMITER: limiter.binding,
      } as unknown as Partial<Env>;
      const post = async (from: string) => {
        const body = JSON.stringify(envelope());
        const headers = { 'CF-Connecting-IP': from };
        return (await fetchGateway(await webhookRequest(body, { headers }), env)).status;
      };
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push(await post('198.51.100.77'));
      expect(tally(statuses)).toEqual({ 200: 6, 429: 4 });
      expect(await post('198.51.100.78')).toBe(200);
      const [other, ...busy] = Object.entries(byObject(limiter.calls())).reverse();
      expect(Object.fromEntries(busy)).toEqual({
        'webhooks:198.51.100.77/1-of-2': { limit: 3, takes: 4 },
        'webhooks:198.51.100.77/2-of-2': { limit: 3, takes: 4 },
      });
      // Another address starts at either of its own two objects.
      expect(other?.[0]).toMatch(/^webhooks:198\.51\.100\.78\/[12]-of-2$/);
      expect(other?.[1]).toEqual({ limit: 3, takes: 1 });
    });
  });

  describe('admin sign-in throttle', () => {
    it('should stay one exact object per budget however small RATE_LIMIT_PER_OBJECT_PER_MINUTE is', async () => {
      const limiter = recordingLimiter();
      const env = {
        RATE_LIMIT_PER_OBJECT_PER_MINUTE: '1',
        RATE_LIMITER: limiter.binding,
      } as unknown as Partial<Env>;
      const address = '203.0.113.91';
      const statuses: number[] = [];
      for (let i = 0; i <= ADMIN_FAILURES_PER_MINUTE; i++) {
        const request = adminRequest('GET', '/admin/subscriptions', {
          token: `guess-${i}`,
          headers: { 'CF-Connecting-IP': address },
        });
        statuses.push((await fetchGateway(request, env)).status);
      }
      expect(statuses).toEqual([...Array(ADMIN_FAILURES_PER_MINUTE).fill(401), 429]);
      const objects = byObject(limiter.calls().filter((call) => call.method === 'reserve'));
      expect(objects[`admin-failures/client/${address}`]).toEqual({
        limit: ADMIN_FAILURES_PER_MINUTE,
        takes: ADMIN_FAILURES_PER_MINUTE + 1,
      });
      expect(Object.keys(objects).every((object) => !object.includes('-of-'))).toBe(true);
    });
  });
});
