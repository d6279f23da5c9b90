/**
 * The limiter object's sign-in reservations, called directly on the real Durable Object:
 * concurrent requests presenting one credential share one reservation, distinct
 * credentials take a slot each, and the last holder's release decides whether the slot is
 * given back. Each test runs on objects no other test reaches (privateLimiter).
 */
import { describe, expect, it } from 'vitest';
import { privateLimiter } from './limiter-bindings.ts';

const LIMIT = 5;

describe('rate limiter', () => {
  describe('sign-in reservations', () => {
    it('should count one slot for a credential held by many requests at once', async () => {
      const budget = privateLimiter().getByName('admin-failures/client/shared');
      const shared = await Promise.all(
        Array.from({ length: 4 * LIMIT }, () => budget.reserve(LIMIT, 'right')),
      );
      expect(shared.every((decision) => decision.allowed)).toBe(true);
      // The other four slots go to four other credentials; the fifth is refused.
      for (let i = 0; i < LIMIT - 1; i++) {
        expect((await budget.reserve(LIMIT, `guess-${i}`)).allowed).toBe(true);
      }
      const refused = await budget.reserve(LIMIT, 'guess-over');
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      // Still shared while any holder has not released it.
      expect((await budget.reserve(LIMIT, 'right')).allowed).toBe(true);
    });

    it('should give the slot back only when the last holder releases it with refund', async () => {
      const budget = privateLimiter().getByName('admin-failures/client/release');
      for (let i = 0; i < LIMIT - 1; i++) await budget.reserve(LIMIT, `guess-${i}`);
      await Promise.all([budget.reserve(LIMIT, 'right'), budget.reserve(LIMIT, 'right')]);
      await budget.release(LIMIT, 'right', 'refund');
      // One holder left: the slot is still taken.
      expect((await budget.reserve(LIMIT, 'guess-while-held')).allowed).toBe(false);
      await budget.release(LIMIT, 'right', 'refund');
      expect((await budget.reserve(LIMIT, 'guess-after')).allowed).toBe(true);
      expect((await budget.reserve(LIMIT, 'guess-over')).allowed).toBe(false);
    });

    it('should keep the slot of a credential released with keep, and count its next use again', async () => {
      const budget = privateLimiter().getByName('admin-failures/client/keep');
      for (let i = 0; i < LIMIT - 2; i++) {
        await budget.reserve(LIMIT, `guess-${i}`);
        await budget.release(LIMIT, `guess-${i}`, 'keep');
      }
      await budget.reserve(LIMIT, 'wrong');
      await budget.release(LIMIT, 'wrong', 'keep');
      // Released: the same wrong token sent again is a new failed sign-in, the last slot.
      expect((await budget.reserve(LIMIT, 'wrong')).allowed).toBe(true);
      await budget.release(LIMIT, 'wrong', 'keep');
      expect((await budget.reserve(LIMIT, 'wrong')).allowed).toBe(false);
    });

    it('should give nothing back for a reservation it does not know', async () => {
      const budget = privateLimiter().getByName('admin-failures/client/unknown');
      for (let i = 0; i < LIMIT; i++) await budget.reserve(LIMIT, `guess-${i}`);
      await budget.release(LIMIT, 'never-reserved', 'refund');
      expect((await budget.reserve(LIMIT, 'guess-over')).allowed).toBe(false);
    });
  });
});
