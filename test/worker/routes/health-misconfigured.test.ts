/**
 * `GET /healthz` while the settings are invalid, through the real Worker and the real rate
 * limiter Durable Object: 503 `misconfigured` to anyone, the invalid settings named only
 * with `deep=1` and the admin token (read by its own row, trusted only when it and every
 * setting its rules read are valid), every token not accepted answered like no token and
 * counted by the failed admin sign-in throttle. Each test runs on a private set of limiter
 * objects (test/worker/rate-limit/limiter-bindings.ts), so its guesses throttle no other test.
 */
import { describe, expect, it } from 'vitest';
import type { SettingName } from '../../../worker/config.ts';
import { ADMIN_FAILURES_PER_MINUTE } from '../../../worker/rate-limit/admin-failures.ts';
import { LONG_ADMIN_TOKEN, PRODUCTION_VARS } from '../config-fixtures.ts';
import {
  CALLER_TOKEN,
  errorBody,
  fetchGateway,
  GATEWAY_ORIGIN,
  useCapturedLogs,
} from '../helpers.ts';
import { privateLimiter } from '../rate-limit/limiter-bindings.ts';
import { ADMIN_TOKEN } from './admin/admin-helpers.ts';

// Keeps the request and config_invalid lines out of the test output.
useCapturedLogs();

/** The plain answer: what anyone gets while the settings are invalid. */
const PLAIN = { status: 'misconfigured' };

/**
 * `GET /healthz` (with `?deep=1` when `deep`) from `address`, with `authorization` as the
 * whole `Authorization` header (none when `null`), on the test bindings with `overrides`.
 */
function healthz(
  overrides: Partial<Env>,
  options: { deep?: boolean; authorization?: string | null; address?: string } = {},
): Promise<Response> {
  const { deep = true, authorization = null, address = '198.51.100.70' } = options;
  const headers = new Headers({ 'CF-Connecting-IP': address });
  if (authorization !== null) headers.set('Authorization', authorization);
  const query = deep ? '?deep=1' : '';
  return fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz${query}`, { headers }), overrides);
}

/** Reads a health answer: its status code and body. */
async function answer(res: Promise<Response>): Promise<[number, unknown]> {
  const response = await res;
  return [response.status, await response.json()];
}

/** Production settings (rate limits at their defaults) with `overrides`, on a private limiter. */
function production(overrides: Partial<Record<SettingName, string>>): Partial<Env> {
  return {
    RATE_LIMIT_PER_MINUTE: '',
    WEBHOOK_RATE_LIMIT_PER_MINUTE: '',
    ...PRODUCTION_VARS,
    ...overrides,
    RATE_LIMITER: privateLimiter(),
  } as Partial<Env>;
}

/** The test bindings with one invalid setting, not the admin token's, on a private limiter. */
function invalidTimeout(): Partial<Env> {
  return { UPSTREAM_TIMEOUT_MS: 'soon', RATE_LIMITER: privateLimiter() } as Partial<Env>;
}

const BEARER = `Bearer ${ADMIN_TOKEN}`;

describe('gateway', () => {
  describe('GET /healthz while the settings are invalid', () => {
    it('should name the invalid settings only with deep=1 and the admin token', async () => {
      const env = invalidTimeout();
      expect(await answer(healthz(env, { deep: false }))).toEqual([503, PLAIN]);
      expect(await answer(healthz(env, { deep: false, authorization: BEARER }))).toEqual([
        503,
        PLAIN,
      ]);
      expect(await answer(healthz(env))).toEqual([503, PLAIN]);
      expect(await answer(healthz(env, { authorization: BEARER }))).toEqual([
        503,
        { status: 'misconfigured', invalid_settings: ['UPSTREAM_TIMEOUT_MS'] },
      ]);
    });

    it('should answer a token it does not accept as it answers no token, never with 401', async () => {
      const env = invalidTimeout();
      for (const authorization of [
        'Bearer not-the-admin-token',
        `Bearer ${CALLER_TOKEN}`,
        `Bearer ${ADMIN_TOKEN}x`,
        `Basic ${ADMIN_TOKEN}`,
        'Bearer',
      ]) {
        const res = healthz(env, { authorization, address: `test-${crypto.randomUUID()}` });
        expect(await answer(res), authorization).toEqual([503, PLAIN]);
      }
    });

    it('should name nothing, to its own value neither, when ADMIN_TOKEN itself is invalid', async () => {
      // In every mode the admin token must differ from each caller's token.
      const callers = { ADMIN_TOKEN: CALLER_TOKEN, RATE_LIMITER: privateLimiter() };
      expect(await answer(healthz(callers, { authorization: `Bearer ${CALLER_TOKEN}` }))).toEqual([
        503,
        PLAIN,
      ]);
      // Too short and too plain for production, then equal to the provider's secret.
      for (const [adminToken, overrides] of [
        ['admin-token', {}],
        ['a'.repeat(40), {}],
        [PRODUCTION_VARS.WEBHOOK_SECRET, {}],
        [
          `${LONG_ADMIN_TOKEN}-also-merchant`,
          { UPSTREAM_SECRET: `${LONG_ADMIN_TOKEN}-also-merchant` },
        ],
      ] as const) {
        const env = production({ ...overrides, ADMIN_TOKEN: adminToken ?? '' });
        const res = healthz(env, { authorization: `Bearer ${adminToken}` });
        expect(await answer(res), adminToken).toEqual([503, PLAIN]);
      }
    });

    it('should trust the admin token only when every setting its rules read is valid', async () => {
      const control = production({ UPSTREAM_TIMEOUT_MS: 'soon' });
      const bearer = `Bearer ${LONG_ADMIN_TOKEN}`;
      expect(await answer(healthz(control, { authorization: bearer }))).toEqual([
        503,
        { status: 'misconfigured', invalid_settings: ['UPSTREAM_TIMEOUT_MS'] },
      ]);
      // Unreadable mode (so its production rules went unchecked), an unreadable callers
      // list, a provider secret too weak to have been compared with it.
      for (const overrides of [
        { GATEWAY_MODE: 'staging' },
        { GATEWAY_CALLERS: '{broken' },
        { WEBHOOK_SECRET: 'short' },
        { UPSTREAM_SECRET: '' },
      ]) {
        const res = healthz(production(overrides), { authorization: bearer });
        expect(await answer(res), JSON.stringify(overrides)).toEqual([503, PLAIN]);
      }
    });

    it('should count each token it does not accept as a failed admin sign-in, and give a right one back', async () => {
      const env = invalidTimeout();
      const address = '198.51.100.71';
      // Neither a request without the header nor the right token spends the budget.
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE + 2; i++) {
        expect(await answer(healthz(env, { address }))).toEqual([503, PLAIN]);
        const res = await healthz(env, { address, authorization: BEARER });
        expect((await res.json()) as object).toHaveProperty('invalid_settings');
      }
      const startedAt = Date.now();
      const plain = await guessUntilThrottled(env, address, `Bearer ${ADMIN_TOKEN}-wrong`);
      expect(plain).toBeGreaterThanOrEqual(ADMIN_FAILURES_PER_MINUTE);
      expect(plain).toBeLessThanOrEqual(budgetSince(startedAt));
      // Throttled: the right token is not compared either, and reads no names.
      const right = await healthz(env, { address, authorization: BEARER });
      expect(right.status).toBe(429);
      expect(await errorBody(right)).toMatchObject({ code: 'rate_limited' });
    });

    it('should count the tokens sent while ADMIN_TOKEN is invalid as it counts wrong ones', async () => {
      // The same number of plain answers, then 429: the throttle does not tell either.
      const env = { ADMIN_TOKEN: CALLER_TOKEN, RATE_LIMITER: privateLimiter() };
      const startedAt = Date.now();
      const plain = await guessUntilThrottled(env, '198.51.100.72', `Bearer ${CALLER_TOKEN}`);
      expect(plain).toBeGreaterThanOrEqual(ADMIN_FAILURES_PER_MINUTE);
      expect(plain).toBeLessThanOrEqual(budgetSince(startedAt));
    });
  });
});

/**
 * Sends `authorization` from `address` with `deep=1` until the throttle answers 429 (at
 * most three budgets' worth); each answer before it must be the plain one.
 *
 * @returns how many plain answers came before the 429.
 */
async function guessUntilThrottled(
  env: Partial<Env>,
  address: string,
  authorization: string,
): Promise<number> {
  for (let sent = 0; sent < 3 * ADMIN_FAILURES_PER_MINUTE; sent++) {
    const res = await healthz(env, { address, authorization });
    if (res.status === 429) {
      expect(await errorBody(res)).toMatchObject({ code: 'rate_limited' });
      return sent;
    }
    expect([res.status, await res.json()]).toEqual([503, PLAIN]);
  }
  throw new Error(`no 429 after ${3 * ADMIN_FAILURES_PER_MINUTE} guesses`);
}

/**
 * The most failed sign-ins a fresh address budget lets through since `startedAt` (ms): the
 * burst, plus one for each interval (60 s / budget) that went by meanwhile.
 */
function budgetSince(startedAt: number): number {
  return (
    ADMIN_FAILURES_PER_MINUTE +
    Math.floor((Date.now() - startedAt) / (60_000 / ADMIN_FAILURES_PER_MINUTE))
  );
}
