import { describe, expect, it } from 'vitest';
import {
  errorBody,
  expectConfigurationError,
  fetchGateway,
  gatewayRequest,
  sandboxRequests,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';

const logs = useCapturedLogs();

/**
 * Bindings with two fresh callers (the limiter's state outlives a test: fresh names
 * start with a full allowance) and `RATE_LIMIT_PER_MINUTE` set to `limit`.
 */
function limited(limit: string): { env: Partial<Env>; first: string; second: string } {
  const suffix = crypto.randomUUID();
  const first = `first-${suffix}`;
  const second = `second-${suffix}`;
  return {
    first,
    second,
    env: {
      RATE_LIMIT_PER_MINUTE: limit,
      GATEWAY_CALLERS: JSON.stringify([
        { name: first, token: `${first}-token` },
        { name: second, token: `${second}-token` },
      ]),
    },
  };
}

/** A signed GET the sandbox answers 200, as `caller`. */
function countRefunds(caller: string, requestId = uniqueRequestId()): Request {
  return gatewayRequest('/refunds/count-by-status', { token: `${caller}-token`, requestId });
}

describe('gateway', () => {
  describe('rate limiting', () => {
    it('should answer 429 rate_limited with Retry-After over the limit, without calling the upstream', async () => {
      const { env, first } = limited('2');
      for (let i = 0; i < 2; i++) {
        expect((await fetchGateway(countRefunds(first), env)).status).toBe(200);
      }
      const id = uniqueRequestId();
      const res = await fetchGateway(countRefunds(first, id), env);
      expect(res.status).toBe(429);
      // 2 a minute: the next request fits 30 s after the burst.
      expect(res.headers.get('Retry-After')).toBe('30');
      expect(await errorBody(res)).toEqual({
        status: 'error',
        message: 'Too many requests: the limit is 2 per minute; retry in 30 s',
        code: 'rate_limited',
        request_id: id,
      });
      expect(await sandboxRequests(id)).toEqual([]);
      // Its own line, wherever it is: a delivery batch another file left may log meanwhile.
      expect(logs.lines().filter((line) => line.request_id === id)).toContainEqual(
        expect.objectContaining({
          event: 'request',
          caller: first,
          status: 429,
          error_code: 'rate_limited',
        }),
      );
    });

    it('should count each caller apart', async () => {
      const { env, first, second } = limited('1');
      expect((await fetchGateway(countRefunds(first), env)).status).toBe(200);
      expect((await fetchGateway(countRefunds(first), env)).status).toBe(429);
      expect((await fetchGateway(countRefunds(second), env)).status).toBe(200);
    });

    it('should allow a burst of the limit, then answer a Retry-After of at least 1 second', async () => {
      const { env, first } = limited('120');
      let allowed = 0;
      let refused: Response | undefined;
      while (refused === undefined && allowed < 200) {
        const res = await fetchGateway(countRefunds(first), env);
        if (res.status === 429) refused = res;
        else allowed += 1;
      }
      // 120 at once, plus the one every 0.5 s that refills while the burst is sent.
      expect(allowed).toBeGreaterThanOrEqual(120);
      expect(allowed).toBeLessThan(130);
      // The next one fits in under 0.5 s: rounded up to a whole second.
      expect(refused?.headers.get('Retry-After')).toBe('1');
    });

    it('should limit nothing when RATE_LIMIT_PER_MINUTE is 0', async () => {
      const { env, first } = limited('0');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await fetchGateway(countRefunds(first), env)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    });

    it('should refuse everything (503) with an invalid RATE_LIMIT_PER_MINUTE, logged once', async () => {
      const { env, first } = limited('lots');
      for (let i = 0; i < 3; i++) {
        await expectConfigurationError(await fetchGateway(countRefunds(first), env), [
          'RATE_LIMIT_PER_MINUTE',
        ]);
      }
      expect(logs.lines().filter((line) => line.event === 'config_invalid')).toEqual([
        expect.objectContaining({ level: 'error', setting: 'RATE_LIMIT_PER_MINUTE' }),
      ]);
    });

    it('should let requests through and log when the limiter is unavailable', async () => {
      const { env, first } = limited('1');
      const without = { ...env, RATE_LIMITER: undefined } as unknown as Partial<Env>;
      for (let i = 0; i < 2; i++) {
        expect((await fetchGateway(countRefunds(first), without)).status).toBe(200);
      }
      expect(logs.lines().filter((line) => line.event === 'rate_limiter_failed')).toHaveLength(2);
    });
  });
});
