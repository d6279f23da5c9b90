/**
 * The admin API's subscription routes (`/admin/subscriptions`) through the
 * real Worker and D1: create, list, get, update, delete, rotate secret; secrets shown
 * only on create and rotate; 404s. Validation is in admin-subscriptions-validation.test.ts.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { errorBody, fetchGateway, UUID, useCapturedLogs } from '../../helpers.ts';
import {
  adminRequest,
  createSubscription,
  dataOf,
  type SubscriptionData,
} from './admin-helpers.ts';

const DAY_MS = 86_400_000;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

useCapturedLogs();

function secretBytes(secret: string | undefined): number {
  return atob((secret ?? '').slice('whsec_'.length)).length;
}

async function getSubscription(id: string): Promise<Response> {
  return fetchGateway(adminRequest('GET', `/admin/subscriptions/${encodeURIComponent(id)}`));
}

async function storedSecrets(id: string) {
  // The current secret and the latest replaced one (migrations/0009 keeps every replaced one).
  return env.DB.prepare(
    `SELECT s.secret, p.secret AS previous_secret, p.expires_at AS previous_secret_expires_at
     FROM subscriptions AS s LEFT JOIN subscription_previous_secrets AS p
       ON p.subscription_id = s.id
     WHERE s.id = ?1 ORDER BY p.expires_at DESC LIMIT 1`,
  )
    .bind(id)
    .first<{
      secret: string;
      previous_secret: string | null;
      previous_secret_expires_at: number | null;
    }>();
}

describe('admin subscriptions', () => {
  describe('POST /admin/subscriptions', () => {
    it('should create with defaults and show the secret once', async () => {
      const before = Date.now();
      const created = await createSubscription({ url: 'https://HOOKS.example.com/edgepay' });
      expect(created).toEqual({
        id: expect.stringMatching(/^sub_/),
        url: 'https://hooks.example.com/edgepay',
        event_types: null,
        description: null,
        enabled: true,
        max_per_second: null,
        max_in_flight: null,
        ordered: false,
        health: {
          state: 'healthy',
          reason: null,
          changed_at: created.created_at,
          failing_since: null,
          disabled_at: null,
          success_rate: { window_hours: 24, attempts: 0, succeeded: 0, failed: 0, rate: null },
        },
        previous_secret_expires_at: null,
        created_at: expect.any(String),
        updated_at: created.created_at,
        secret: expect.stringMatching(SECRET),
      });
      expect(created.id.slice('sub_'.length)).toMatch(UUID);
      expect(Date.parse(created.created_at)).toBeGreaterThanOrEqual(before);
      expect(secretBytes(created.secret)).toBe(32);
      expect((await storedSecrets(created.id))?.secret).toBe(created.secret);
    });

    it('should store the given filter, description and enabled flag', async () => {
      const created = await createSubscription({
        event_types: ['charge_success', 'refund_success', 'charge_success'],
        description: 'ledger service',
        enabled: false,
      });
      expect(created).toMatchObject({
        event_types: ['charge_success', 'refund_success'],
        description: 'ledger service',
        enabled: false,
      });
      expect(await dataOf(await getSubscription(created.id))).toMatchObject({
        event_types: ['charge_success', 'refund_success'],
        enabled: false,
      });
    });

    it('should give every subscription its own id and secret', async () => {
      const [a, b] = await Promise.all([createSubscription(), createSubscription()]);
      expect(a?.id).not.toBe(b?.id);
      expect(a?.secret).not.toBe(b?.secret);
    });
  });

  describe('GET /admin/subscriptions/:id', () => {
    it('should show the subscription without its secret', async () => {
      const { secret, ...view } = await createSubscription({ description: 'x' });
      const res = await getSubscription(view.id);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(secret);
      expect(JSON.parse(text)).toEqual({ status: 'success', data: view });
    });

    it.each(['sub_00000000-0000-4000-8000-000000000000', 'no such id'])(
      'should answer 404 not_found for %j',
      async (id) => {
        const res = await getSubscription(id);
        expect(res.status).toBe(404);
        expect(await errorBody(res)).toMatchObject({ status: 'error', code: 'not_found' });
      },
    );
  });

  describe('GET /admin/subscriptions', () => {
    it('should list newest first, without secrets', async () => {
      const first = await createSubscription();
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await createSubscription();
      const res = await fetchGateway(adminRequest('GET', '/admin/subscriptions'));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(first.secret);
      expect(text).not.toContain(second.secret);
      const { data } = JSON.parse(text) as { data: SubscriptionData[] };
      for (const item of data) expect(item).not.toHaveProperty('secret');
      const ids = data.map((item) => item.id);
      expect(ids).toContain(first.id);
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
      const { secret: _, ...view } = first;
      expect(data.find((item) => item.id === first.id)).toEqual(view);
    });
  });

  describe('PATCH /admin/subscriptions/:id', () => {
    it('should change the given fields, keep the others, and never show the secret', async () => {
      const created = await createSubscription({
        description: 'old',
        event_types: ['charge_success'],
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await fetchGateway(
        adminRequest('PATCH', `/admin/subscriptions/${created.id}`, {
          json: { description: 'new', enabled: false },
        }),
      );
      expect(res.status).toBe(200);
      const updated = await dataOf(res);
      const { secret, ...view } = created;
      expect(updated).toEqual({
        ...view,
        description: 'new',
        enabled: false,
        health: {
          ...view.health,
          state: 'disabled',
          reason: 'disabled by an operator',
          changed_at: updated.updated_at,
          disabled_at: updated.updated_at,
        },
        updated_at: expect.any(String),
      });
      expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
      expect((await storedSecrets(created.id))?.secret).toBe(secret);
      expect(await dataOf(await getSubscription(created.id))).toEqual(updated);
    });

    it('should set a new URL (normalized), clear the filter and the description', async () => {
      const created = await createSubscription({
        description: 'x',
        event_types: ['charge_success'],
      });
      const res = await fetchGateway(
        adminRequest('PATCH', `/admin/subscriptions/${created.id}`, {
          json: { url: 'https://New.example.com/hooks', event_types: null, description: null },
        }),
      );
      expect(await dataOf(res)).toMatchObject({
        url: 'https://new.example.com/hooks',
        event_types: null,
        description: null,
        enabled: true,
      });
    });

    it('should answer 404 not_found for an unknown id', async () => {
      const res = await fetchGateway(
        adminRequest('PATCH', '/admin/subscriptions/sub_missing', { json: { enabled: false } }),
      );
      expect(res.status).toBe(404);
      expect(await errorBody(res)).toMatchObject({ code: 'not_found' });
    });
  });

  describe('DELETE /admin/subscriptions/:id', () => {
    it('should delete with 204 and no body, then answer 404', async () => {
      const created = await createSubscription();
      const res = await fetchGateway(adminRequest('DELETE', `/admin/subscriptions/${created.id}`));
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect((await getSubscription(created.id)).status).toBe(404);
      const again = await fetchGateway(
        adminRequest('DELETE', `/admin/subscriptions/${created.id}`),
      );
      expect(again.status).toBe(404);
      expect(await errorBody(again)).toMatchObject({ code: 'not_found' });
    });
  });

  describe('POST /admin/subscriptions/:id/rotate-secret', () => {
    it('should show a new secret once and keep the old one for 24 h', async () => {
      const created = await createSubscription();
      const before = Date.now();
      const res = await fetchGateway(
        adminRequest('POST', `/admin/subscriptions/${created.id}/rotate-secret`),
      );
      const after = Date.now();
      expect(res.status).toBe(200);
      const rotated = await dataOf(res);
      expect(rotated.secret).toMatch(SECRET);
      expect(rotated.secret).not.toBe(created.secret);
      expect(secretBytes(rotated.secret)).toBe(32);
      const expiresAt = Date.parse(rotated.previous_secret_expires_at ?? '');
      expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + DAY_MS);
      expect(await storedSecrets(created.id)).toEqual({
        secret: rotated.secret,
        previous_secret: created.secret,
        previous_secret_expires_at: expiresAt,
      });
      const shown = await getSubscription(created.id);
      const text = await shown.text();
      expect(text).not.toContain(rotated.secret);
      expect(text).not.toContain(created.secret);
      expect(JSON.parse(text).data.previous_secret_expires_at).toBe(
        rotated.previous_secret_expires_at,
      );
    });

    it('should stop showing the previous secret expiry once it has passed', async () => {
      const created = await createSubscription();
      await env.DB.prepare(
        "INSERT INTO subscription_previous_secrets (subscription_id, secret, expires_at) VALUES (?1, 'whsec_old', ?2)",
      )
        .bind(created.id, Date.now() - 1)
        .run();
      expect(await dataOf(await getSubscription(created.id))).toMatchObject({
        previous_secret_expires_at: null,
      });
    });

    it('should answer 404 not_found for an unknown id', async () => {
      const res = await fetchGateway(
        adminRequest('POST', '/admin/subscriptions/sub_missing/rotate-secret'),
      );
      expect(res.status).toBe(404);
      expect(await errorBody(res)).toMatchObject({ code: 'not_found' });
    });
  });
});
