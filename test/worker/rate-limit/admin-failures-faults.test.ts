/**
 * The throttle of failed admin sign-ins when its limiter fails, through the real Worker:
 * calls to the real rate limiter Durable Object fail on purpose
 * (test/worker/rate-limit/limiter-bindings.ts). It fails closed: no token is compared
 * while failures cannot be counted.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_FAILURES_PER_MINUTE } from '../../../worker/rate-limit/admin-failures.ts';
import { errorBody, fetchGateway, useCapturedLogs } from '../helpers.ts';
import { ADMIN_TOKEN, adminRequest } from '../routes/admin/admin-helpers.ts';
import { faultyLimiter } from './limiter-bindings.ts';

const logs = useCapturedLogs();

/** One admin sign-in from `address` with `token` (no `Authorization` when `null`). */
function signIn(
  overrides: Partial<Env>,
  address: string,
  token: string | null = ADMIN_TOKEN,
): Promise<Response> {
  const headers = { 'CF-Connecting-IP': address };
  return fetchGateway(adminRequest('GET', '/admin/subscriptions', { token, headers }), overrides);
}

/** Checks `res` is the 429 of a limiter that cannot be reached. */
async function expectLimiterUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get('Retry-After')).toBe('10');
  expect(await errorBody(res)).toMatchObject({
    code: 'rate_limited',
    message: 'Failed admin sign-ins cannot be counted right now; retry in 10 s',
  });
}

describe('admin API', () => {
  describe('failed sign-in throttle when the limiter fails', () => {
    it("should answer 429 without comparing the token when the address's count cannot be reached", async () => {
      const limiter = faultyLimiter({ method: 'reserve', failOn: /admin-failures\/client\// });
      const overrides = { RATE_LIMITER: limiter.binding };
      await expectLimiterUnavailable(await signIn(overrides, '198.51.100.40'));
      await expectLimiterUnavailable(await signIn(overrides, '198.51.100.40', 'guess'));
      expect(limiter.injected()).toBe(2);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          event: 'rate_limiter_failed',
          limit: 'admin_failures',
          operation: 'reserve',
        }),
      );
    });

    it("should answer 429 when the gateway's count cannot be reached, and give the address's reservation back", async () => {
      const address = '198.51.100.41';
      const limiter = faultyLimiter({
        method: 'reserve',
        failOn: /admin-failures\/global$/,
        times: ADMIN_FAILURES_PER_MINUTE,
      });
      const overrides = { RATE_LIMITER: limiter.binding };
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) {
        await expectLimiterUnavailable(await signIn(overrides, address, `guess-${i}`));
      }
      expect(limiter.injected()).toBe(ADMIN_FAILURES_PER_MINUTE);
      // None of them was compared, so none is counted against the address.
      expect((await signIn(overrides, address, 'guess-after')).status).toBe(401);
    });

    it('should answer 429 when the limiter binding is missing', async () => {
      const overrides = { RATE_LIMITER: undefined } as unknown as Partial<Env>;
      await expectLimiterUnavailable(await signIn(overrides, '198.51.100.42'));
    });

    it('should let a right token in when its reservation cannot be given back, and log it', async () => {
      const limiter = faultyLimiter({ method: 'release', failOn: /^/ });
      const res = await signIn({ RATE_LIMITER: limiter.binding }, '198.51.100.43');
      expect(res.status).toBe(200);
      // The address's reservation and the gateway's.
      expect(limiter.injected()).toBe(2);
      expect(logs.lines().filter((line) => line.event === 'rate_limiter_failed')).toEqual([
        expect.objectContaining({ operation: 'release' }),
        expect.objectContaining({ operation: 'release' }),
      ]);
    });

    it('should refuse a request without an Authorization header 401, without calling the limiter', async () => {
      const limiter = faultyLimiter({ method: 'reserve', failOn: /^/ });
      const res = await signIn({ RATE_LIMITER: limiter.binding }, '198.51.100.44', null);
      expect(res.status).toBe(401);
      expect(await errorBody(res)).toMatchObject({ code: 'unauthorized' });
      expect(limiter.injected()).toBe(0);
    });
  });
});
