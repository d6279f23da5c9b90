/**
 * The D1 queries on `subscriptions` against the real D1 of miniflare (migrations applied
 * by fresh-storage.ts). Each test uses its own ids, so files and tests running in
 * parallel never see each other's rows.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { toSubscriptionRecord } from '../../../worker/db/subscription-rows.ts';
import {
  deleteSubscription,
  findSubscription,
  initialHealth,
  insertSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  type SubscriptionRecord,
  updateSubscription,
} from '../../../worker/db/subscriptions.ts';

const NOW = 1_900_000_000_000;
const DAY_MS = 86_400_000;

function newSubscription(
  overrides: Partial<Omit<SubscriptionRecord, 'health'>> = {},
): SubscriptionRecord {
  const record = {
    id: `sub_db_${crypto.randomUUID()}`,
    url: 'https://hooks.example.com/edgepay',
    eventTypes: ['charge_success', 'refund_success'],
    description: 'ledger',
    enabled: true,
    secret: 'whsec_current',
    previousSecrets: [],
    createdAt: NOW,
    updatedAt: NOW,
    maxPerSecond: null,
    maxInFlight: null,
    ordered: false,
    ...overrides,
  };
  return { ...record, health: initialHealth(record) };
}

describe('subscriptions (D1)', () => {
  describe('insertSubscription', () => {
    it('should store every field and read it back unchanged', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      expect(await findSubscription(env.DB, record.id)).toEqual(record);
    });

    it('should store the limits and ordering', async () => {
      const record = newSubscription({ maxPerSecond: 0.5, maxInFlight: 3, ordered: true });
      await insertSubscription(env.DB, record);
      expect(await findSubscription(env.DB, record.id)).toEqual(record);
    });

    it('should start a subscription created disabled as disabled at its creation', async () => {
      const record = newSubscription({ enabled: false });
      await insertSubscription(env.DB, record);
      expect((await findSubscription(env.DB, record.id))?.health).toEqual({
        failingSince: null,
        disabledAt: NOW,
        changedAt: NOW,
        reason: 'created disabled',
      });
    });

    it('should store a NULL filter (every event type), no description and disabled', async () => {
      const record = newSubscription({ eventTypes: null, description: null, enabled: false });
      await insertSubscription(env.DB, record);
      const row = await env.DB.prepare(
        'SELECT event_types, enabled FROM subscriptions WHERE id = ?1',
      )
        .bind(record.id)
        .first();
      expect(row).toEqual({ event_types: null, enabled: 0 });
      expect(await findSubscription(env.DB, record.id)).toEqual(record);
    });

    it('should refuse a second subscription with the same id', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      await expect(
        insertSubscription(env.DB, { ...record, url: 'https://other.example' }),
      ).rejects.toThrow(/UNIQUE|PRIMARY/i);
      expect((await findSubscription(env.DB, record.id))?.url).toBe(record.url);
    });
  });

  describe('findSubscription', () => {
    it('should answer undefined for an unknown id', async () => {
      expect(await findSubscription(env.DB, 'sub_missing')).toBeUndefined();
    });
  });

  describe('listSubscriptions', () => {
    it('should list newest first, ties broken by id descending', async () => {
      const tag = crypto.randomUUID();
      const older = newSubscription({ id: `sub_db_${tag}_a`, createdAt: NOW + 1 });
      const newer = newSubscription({ id: `sub_db_${tag}_b`, createdAt: NOW + 3 });
      const tieLow = newSubscription({ id: `sub_db_${tag}_c`, createdAt: NOW + 2 });
      const tieHigh = newSubscription({ id: `sub_db_${tag}_d`, createdAt: NOW + 2 });
      for (const record of [older, tieLow, newer, tieHigh])
        await insertSubscription(env.DB, record);
      const ids = (await listSubscriptions(env.DB))
        .map((record) => record.id)
        .filter((id) => id.includes(tag));
      expect(ids).toEqual([newer.id, tieHigh.id, tieLow.id, older.id]);
    });
  });

  describe('updateSubscription', () => {
    it('should change only the given fields and set updated_at', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      const updated = await updateSubscription(env.DB, record.id, { ordered: true }, NOW + 5);
      expect(updated?.record).toEqual({ ...record, ordered: true, updatedAt: NOW + 5 });
      expect(updated?.before).toEqual(record);
      expect(await findSubscription(env.DB, record.id)).toEqual(updated?.record);
    });

    it("should record an operator's disable in the health, once", async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      const disabled = await updateSubscription(env.DB, record.id, { enabled: false }, NOW + 5);
      const health = {
        failingSince: null,
        disabledAt: NOW + 5,
        changedAt: NOW + 5,
        reason: 'disabled by an operator',
      };
      expect(disabled?.record.health).toEqual(health);
      // Disabling again changes nothing: the first disable's time and reason stay.
      const again = await updateSubscription(env.DB, record.id, { enabled: false }, NOW + 9);
      expect(again?.record.health).toEqual(health);
    });

    it('should make a re-enabled subscription healthy, its run of failures ended', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      await env.DB.prepare(
        'UPDATE subscriptions SET enabled = 0, failing_since = ?2, disabled_at = ?3 WHERE id = ?1',
      )
        .bind(record.id, NOW + 1, NOW + 2)
        .run();
      const enabled = await updateSubscription(env.DB, record.id, { enabled: true }, NOW + 5);
      expect(enabled?.before.health).toMatchObject({ failingSince: NOW + 1, disabledAt: NOW + 2 });
      expect(enabled?.record.health).toEqual({
        failingSince: null,
        disabledAt: null,
        changedAt: NOW + 5,
        reason: 're-enabled by an operator',
      });
    });

    it('should set every field, NULL filter and description included', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      const changes = {
        url: 'https://new.example.com/x',
        eventTypes: null,
        description: null,
        maxPerSecond: 2.5,
        maxInFlight: 1,
        ordered: true,
      };
      const updated = await updateSubscription(env.DB, record.id, changes, NOW + 7);
      expect(updated?.record).toEqual({ ...record, ...changes, updatedAt: NOW + 7 });
      const cleared = await updateSubscription(
        env.DB,
        record.id,
        { maxPerSecond: null, maxInFlight: null },
        NOW + 8,
      );
      expect(cleared?.record).toMatchObject({ maxPerSecond: null, maxInFlight: null });
    });

    it('should never touch the secrets', async () => {
      const record = newSubscription({
        previousSecrets: [{ secret: 'whsec_old', expiresAt: NOW + DAY_MS }],
      });
      await insertSubscription(env.DB, record);
      const updated = await updateSubscription(
        env.DB,
        record.id,
        { url: 'https://x.example/' },
        NOW + 1,
      );
      expect(updated?.record).toMatchObject({
        secret: 'whsec_current',
        previousSecrets: [{ secret: 'whsec_old', expiresAt: NOW + DAY_MS }],
      });
    });

    it('should answer undefined for an unknown id', async () => {
      expect(
        await updateSubscription(env.DB, 'sub_missing', { enabled: false }, NOW),
      ).toBeUndefined();
    });
  });

  describe('deleteSubscription', () => {
    it('should delete and report it, then report nothing to delete', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      expect(await deleteSubscription(env.DB, record.id)).toBe(true);
      expect(await findSubscription(env.DB, record.id)).toBeUndefined();
      expect(await deleteSubscription(env.DB, record.id)).toBe(false);
    });

    it('should delete a subscription with replaced secrets, and the secrets with it', async () => {
      const record = newSubscription({
        previousSecrets: [{ secret: 'whsec_old', expiresAt: NOW + DAY_MS }],
      });
      await insertSubscription(env.DB, record);
      expect(await deleteSubscription(env.DB, record.id)).toBe(true);
      const left = await env.DB.prepare(
        'SELECT COUNT(*) AS n FROM subscription_previous_secrets WHERE subscription_id = ?1',
      )
        .bind(record.id)
        .first<{ n: number }>();
      expect(left?.n).toBe(0);
    });
  });

  describe('rotateSubscriptionSecret', () => {
    it('should keep the replaced secret with its expiry', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      const rotation = { secret: 'whsec_next', now: NOW + 10, previousValidForMs: DAY_MS };
      const rotated = await rotateSubscriptionSecret(env.DB, record.id, rotation);
      expect(rotated).toEqual({
        ...record,
        secret: 'whsec_next',
        previousSecrets: [{ secret: 'whsec_current', expiresAt: NOW + 10 + DAY_MS }],
        updatedAt: NOW + 10,
      });
      expect(await findSubscription(env.DB, record.id)).toEqual(rotated);
    });

    it('should keep every replaced secret still in its grace period on a second rotation', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      await rotateSubscriptionSecret(env.DB, record.id, {
        secret: 'whsec_2',
        now: NOW,
        previousValidForMs: DAY_MS,
      });
      const rotated = await rotateSubscriptionSecret(env.DB, record.id, {
        secret: 'whsec_3',
        now: NOW + 1,
        previousValidForMs: DAY_MS,
      });
      // Newest first: a subscriber mid-rollout may still verify with either.
      expect(rotated).toMatchObject({
        secret: 'whsec_3',
        previousSecrets: [
          { secret: 'whsec_2', expiresAt: NOW + 1 + DAY_MS },
          { secret: 'whsec_current', expiresAt: NOW + DAY_MS },
        ],
      });
    });

    it('should delete the replaced secrets whose grace period has ended', async () => {
      const record = newSubscription();
      await insertSubscription(env.DB, record);
      await rotateSubscriptionSecret(env.DB, record.id, {
        secret: 'whsec_2',
        now: NOW,
        previousValidForMs: DAY_MS,
      });
      const rotated = await rotateSubscriptionSecret(env.DB, record.id, {
        secret: 'whsec_3',
        now: NOW + DAY_MS,
        previousValidForMs: DAY_MS,
      });
      expect(rotated?.previousSecrets).toEqual([
        { secret: 'whsec_2', expiresAt: NOW + 2 * DAY_MS },
      ]);
      const { results } = await env.DB.prepare(
        'SELECT secret FROM subscription_previous_secrets WHERE subscription_id = ?1',
      )
        .bind(record.id)
        .all();
      expect(results).toEqual([{ secret: 'whsec_2' }]);
    });

    it('should answer undefined for an unknown id', async () => {
      const rotation = { secret: 'whsec_x', now: NOW, previousValidForMs: DAY_MS };
      expect(await rotateSubscriptionSecret(env.DB, 'sub_missing', rotation)).toBeUndefined();
    });
  });

  describe('toSubscriptionRecord', () => {
    const row = {
      id: 'sub_row',
      url: 'https://hooks.example.com/',
      event_types: '["charge_success"]',
      description: null,
      enabled: 1,
      secret: 'whsec_a',
      previous_secrets: '[]',
      created_at: NOW,
      updated_at: NOW,
      max_per_second: null,
      max_in_flight: null,
      ordered: 0,
      failing_since: null,
      disabled_at: null,
      health_changed_at: NOW,
      health_reason: null,
    };

    it('should map a row', () => {
      expect(toSubscriptionRecord(row)).toMatchObject({
        eventTypes: ['charge_success'],
        enabled: true,
      });
    });

    it.each(['{"a":1}', '[1]', 'not json'])('should throw on event_types %j', (eventTypes) => {
      expect(() => toSubscriptionRecord({ ...row, event_types: eventTypes })).toThrow();
    });
  });

  describe('schema', () => {
    it('should refuse a previous secret without its expiry', async () => {
      await expect(
        env.DB.prepare(
          `INSERT INTO subscriptions (id, url, secret, previous_secret, created_at, updated_at)
           VALUES (?1, 'https://x.example/', 'whsec_a', 'whsec_b', 1, 1)`,
        )
          .bind(`sub_db_${crypto.randomUUID()}`)
          .run(),
      ).rejects.toThrow(/CHECK/);
    });
  });
});
