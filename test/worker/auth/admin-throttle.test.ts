/**
 * The throttle of failed admin sign-ins under concurrency, through the real Worker and the
 * real rate limiter Durable Object: a sign-in reserves its failure before the token is
 * compared, so concurrent guesses get no more comparisons than the budgets hold; IPv6
 * addresses count by /64; the gateway has a budget of its own across every address.
 * Every test runs on a private set of limiter objects (test/worker/rate-limit/limiter-bindings.ts),
 * so spending a budget here throttles no other test.
 */
import { describe, expect, it } from 'vitest';
import {
  ADMIN_FAILURES_PER_MINUTE,
  ADMIN_FAILURES_PER_MINUTE_GLOBAL,
} from '../../../worker/rate-limit/admin-failures.ts';
import { errorBody, fetchGateway } from '../helpers.ts';
import { countingLimiter, privateLimiter } from '../rate-limit/limiter-bindings.ts';
import { ADMIN_TOKEN, adminRequest } from '../routes/admin/admin-helpers.ts';

/**
 * One admin sign-in from `address` (no `CF-Connecting-IP` when `null`) with `token` (no
 * `Authorization` when `null`), on the bindings `limiter`.
 */
function signIn(
  limiter: Partial<Env>,
  address: string | null,
  token: string | null = ADMIN_TOKEN,
): Promise<Response> {
  // adminRequest fills in an address of its own only when the header is absent.
  const request = adminRequest('GET', '/admin/subscriptions', {
    token,
    headers: { 'CF-Connecting-IP': address ?? '' },
  });
  if (address !== null) return fetchGateway(request, limiter);
  const headers = new Headers(request.headers);
  headers.delete('CF-Connecting-IP');
  return fetchGateway(new Request(request, { headers }), limiter);
}

/**
 * The most sign-ins a fresh budget of `perMinute` can let through since `startedAt` (ms):
 * the burst, plus one for each interval (60 s / perMinute) that went by meanwhile.
 */
function budgetSince(perMinute: number, startedAt: number): number {
  return perMinute + Math.floor((Date.now() - startedAt) / (60_000 / perMinute));
}

/** How many of `responses` have each status. */
function tally(responses: readonly Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}

/** A random hextet, so each test's IPv6 /64 is its own. */
function hextet(): string {
  return Math.floor(Math.random() * 0xffff).toString(16);
}

describe('admin API', () => {
  describe('failed sign-in throttle', () => {
    it('should compare at most the budget of concurrent guesses from one address, a right token among them included', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const address = '198.51.100.20';
      const startedAt = Date.now();
      const guesses = Array.from({ length: 60 }, (_, i) => signIn(limiter, address, `guess-${i}`));
      // Sent last, while the guesses are in flight: the budget is spent by then.
      const right = signIn(limiter, address);
      const responses = await Promise.all([...guesses, right]);
      const counts = tally(responses);
      const compared = (counts[401] ?? 0) + (counts[200] ?? 0);
      expect(compared).toBeGreaterThanOrEqual(ADMIN_FAILURES_PER_MINUTE);
      expect(compared).toBeLessThanOrEqual(budgetSince(ADMIN_FAILURES_PER_MINUTE, startedAt));
      expect(compared + (counts[429] ?? 0)).toBe(responses.length);
      const last = await right;
      expect(last.status).toBe(429);
      expect(await errorBody(last)).toMatchObject({ code: 'rate_limited' });
      expect(Number(last.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    });

    it('should hold the slot of a right token while it is compared, and give it back after', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const address = '198.51.100.21';
      const statuses: number[] = [];
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE - 1; i++) {
        statuses.push((await signIn(limiter, address, `guess-${i}`)).status);
      }
      expect(statuses).toEqual(Array(ADMIN_FAILURES_PER_MINUTE - 1).fill(401));
      // One slot left: the right token holds it, so the guess sent with it is not compared.
      const [right, guess] = await Promise.all([
        signIn(limiter, address),
        signIn(limiter, address, 'guess-beside-the-right-token'),
      ]);
      expect([right.status, guess.status]).toEqual([200, 429]);
      // Given back: the next guess is compared, and spends the last slot.
      expect((await signIn(limiter, address, 'guess-after')).status).toBe(401);
      expect((await signIn(limiter, address, 'guess-over')).status).toBe(429);
    });

    it('should let every concurrent request with the right token in while one slot is left', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const address = '198.51.100.24';
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE - 1; i++) {
        expect((await signIn(limiter, address, `guess-${i}`)).status).toBe(401);
      }
      // A console's parallel reads: they share the last slot, none refuses another.
      const reads = await Promise.all(
        Array.from({ length: 2 * ADMIN_FAILURES_PER_MINUTE }, () => signIn(limiter, address)),
      );
      expect(tally(reads)).toEqual({ 200: 2 * ADMIN_FAILURES_PER_MINUTE });
      // Given back once they are done: one more guess is compared, the next is not.
      expect((await signIn(limiter, address, 'guess-after')).status).toBe(401);
      expect((await signIn(limiter, address, 'guess-over')).status).toBe(429);
    });

    it('should count every address of an IPv6 /64 together, however written, and other /64s apart', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const prefix = `2001:db8:${hextet()}:${hextet()}`;
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) {
        expect((await signIn(limiter, `${prefix}::${i + 1}`, `guess-${i}`)).status).toBe(401);
      }
      const sameNetwork = [
        `${prefix}:ffff:ffff:ffff:ffff`,
        `${prefix.toUpperCase().replace('2001:DB8', '2001:0DB8')}:0:0:0:abcd`,
      ];
      for (const address of sameNetwork) {
        expect((await signIn(limiter, address, 'guess-same-64')).status).toBe(429);
        expect((await signIn(limiter, address)).status).toBe(429);
      }
      const [first, second] = prefix.split(':').slice(2);
      const nextNetwork = `2001:db8:${first}:${(Number.parseInt(second ?? '0', 16) + 1).toString(16)}::1`;
      expect((await signIn(limiter, nextNetwork, 'guess-next-64')).status).toBe(401);
      expect((await signIn(limiter, nextNetwork)).status).toBe(200);
    });

    it('should count an IPv4-mapped IPv6 address as its IPv4 address', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) {
        expect((await signIn(limiter, '192.0.2.33', `guess-${i}`)).status).toBe(401);
      }
      expect((await signIn(limiter, '::ffff:192.0.2.33', 'guess-mapped')).status).toBe(429);
      expect((await signIn(limiter, '192.0.2.34', 'guess-neighbour')).status).toBe(401);
    });

    it("should stop comparing across every address once the gateway's budget is spent", async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const addresses = 20;
      const startedAt = Date.now();
      const guesses = Array.from({ length: addresses * ADMIN_FAILURES_PER_MINUTE }, (_, i) =>
        signIn(limiter, `203.0.113.${i % addresses}`, `guess-${i}`),
      );
      // A right token from an address that guessed nothing, sent among them: compared or
      // not, it counts like any other (a slot that refilled meanwhile may let it in).
      const right = signIn(limiter, '203.0.113.200');
      const responses = await Promise.all([...guesses, right]);
      const counts = tally(responses);
      const compared = (counts[401] ?? 0) + (counts[200] ?? 0);
      expect(compared).toBeGreaterThanOrEqual(ADMIN_FAILURES_PER_MINUTE_GLOBAL);
      // A right token gives its slot back, which one more guess may then take.
      expect(compared).toBeLessThanOrEqual(
        budgetSince(ADMIN_FAILURES_PER_MINUTE_GLOBAL, startedAt) + (counts[200] ?? 0),
      );
      expect(compared + (counts[429] ?? 0)).toBe(responses.length);
      // No address spent its own budget (10 guesses each): the gateway's refused the rest.
      const refused = responses.filter((res) => res.status === 429);
      for (const res of refused) {
        expect(await errorBody(res)).toMatchObject({
          code: 'rate_limited',
          message: expect.stringContaining('to this gateway'),
        });
      }
    });

    it("should cost one call a sign-in while the gateway's budget is spent, and still throttle the address", async () => {
      const { binding, calls } = countingLimiter();
      const limiter = { RATE_LIMITER: binding };
      // The gateway's budget spent by 20 addresses, none of them past its own.
      const spending = await Promise.all(
        Array.from({ length: ADMIN_FAILURES_PER_MINUTE_GLOBAL + 20 }, (_, i) =>
          signIn(limiter, `203.0.113.${i % 20}`, `guess-${i}`),
        ),
      );
      expect(tally(spending)[429]).toBeGreaterThan(0);
      const before = calls();
      const total = (counts: Record<string, number>) =>
        Object.values(counts).reduce((sum, n) => sum + n, 0);
      // A guesser from a new address, once the gateway refused: one call each.
      const guesses = await Promise.all(
        Array.from({ length: ADMIN_FAILURES_PER_MINUTE + 5 }, (_, i) =>
          signIn(limiter, '198.51.100.7', `more-${i}`),
        ),
      );
      expect(total(calls()) - total(before)).toBe(guesses.length);
      expect(tally(guesses)).toEqual({ 429: guesses.length });
      // Each counted in its address's budget: past it, the address is named.
      const messages = await Promise.all(
        guesses.map(async (res) => (await errorBody(res)).message),
      );
      expect(messages.filter((m) => m.includes('from this address'))).toHaveLength(5);
      expect(messages.filter((m) => m.includes('to this gateway'))).toHaveLength(
        ADMIN_FAILURES_PER_MINUTE,
      );
    });

    it("should give the gateway's budget back for right tokens", async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const startedAt = Date.now();
      const spent = ADMIN_FAILURES_PER_MINUTE_GLOBAL - ADMIN_FAILURES_PER_MINUTE;
      const guesses = await Promise.all(
        Array.from({ length: spent }, (_, i) =>
          signIn(limiter, `203.0.113.${i % 20}`, `guess-${i}`),
        ),
      );
      expect(tally(guesses)).toEqual({ 401: spent });
      // More right tokens than the slots left, one after another: each gives its slot back.
      for (let i = 0; i < 3 * ADMIN_FAILURES_PER_MINUTE; i++) {
        expect((await signIn(limiter, `192.0.2.${100 + i}`)).status).toBe(200);
      }
      const more = await Promise.all(
        Array.from({ length: 3 * ADMIN_FAILURES_PER_MINUTE }, (_, i) =>
          signIn(limiter, `192.0.2.${200 + (i % 5)}`, `guess-more-${i}`),
        ),
      );
      const counts = tally(more);
      expect(spent + (counts[401] ?? 0)).toBeGreaterThanOrEqual(ADMIN_FAILURES_PER_MINUTE_GLOBAL);
      expect(spent + (counts[401] ?? 0)).toBeLessThanOrEqual(
        budgetSince(ADMIN_FAILURES_PER_MINUTE_GLOBAL, startedAt),
      );
    });

    it('should keep requests without a client address in one budget that a guesser holds for one interval at most', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const startedAt = Date.now();
      const guesses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => signIn(limiter, null, `guess-${i}`)),
      );
      const counts = tally(guesses);
      expect(counts[401]).toBeLessThanOrEqual(budgetSince(ADMIN_FAILURES_PER_MINUTE, startedAt));
      expect(counts[429]).toBeGreaterThan(0);
      // The operator waits at most one interval (6 s), however many guesses were refused.
      const operator = await signIn(limiter, null);
      expect(operator.status).toBe(429);
      const retryAfter = Number(operator.headers.get('Retry-After'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60 / ADMIN_FAILURES_PER_MINUTE);
      // A client with an address is not held up.
      expect((await signIn(limiter, '198.51.100.22')).status).toBe(200);
    });

    it('should neither count nor throttle a request without an Authorization header', async () => {
      const limiter = { RATE_LIMITER: privateLimiter() };
      const address = '198.51.100.23';
      for (let i = 0; i < 3 * ADMIN_FAILURES_PER_MINUTE; i++) {
        expect((await signIn(limiter, address, null)).status).toBe(401);
      }
      expect((await signIn(limiter, address)).status).toBe(200);
    });
  });
});
