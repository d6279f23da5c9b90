/**
 * The gateway's settings (worker/config.ts): every variable read by one schema, invalid
 * values answered with 503 `configuration_error` naming the variable (never its value),
 * logged once, reported by `/healthz` (by name to the admin token only); the production rules outside local mode; and what
 * the queue consumer and the cron trigger do while the settings are invalid.
 */
import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  loadSettings,
  MIN_TOKEN_LENGTH,
  parseSettings,
  SETTING_NAMES,
  type SettingName,
  settingsOf,
} from '../../worker/config.ts';
import { runScheduled } from '../../worker/cron.ts';
import { findDelivery } from '../../worker/db/deliveries.ts';
import { DELIVERIES_QUEUE } from '../../worker/relay/consumer.ts';
import {
  LOCAL_VARS,
  LONG_ADMIN_TOKEN,
  LONG_CALLER_TOKEN,
  PRODUCTION_VARS,
  settingsWith,
} from './config-fixtures.ts';
import {
  expectConfigurationError,
  fetchGateway,
  GATEWAY_ORIGIN,
  gatewayRequest,
  useCapturedLogs,
} from './helpers.ts';
import { receivedUnder, runQueue, storeDelivery } from './relay/delivery-helpers.ts';
import { ADMIN_TOKEN, adminRequest } from './routes/admin/admin-helpers.ts';
import { envelope, webhookRequest } from './routes/webhook-helpers.ts';

const logs = useCapturedLogs();

/** The problems of `base` with `overrides`, as `{ variable: problem }`. */
function problemsWith(
  overrides: Partial<Record<SettingName, string>>,
  base: Partial<Record<SettingName, string>> = LOCAL_VARS,
): Record<string, string> {
  const loaded = parseSettings({ ...base, ...overrides });
  return loaded.ok ? {} : Object.fromEntries(loaded.problems.map((p) => [p.variable, p.problem]));
}

/**
 * Production settings for the test Worker: `PRODUCTION_VARS` over every test binding,
 * the test's own rate limit (0, off) unset so production's default applies.
 */
function production(overrides: Partial<Record<SettingName, string>> = {}): Partial<Env> {
  return {
    RATE_LIMIT_PER_MINUTE: '',
    WEBHOOK_RATE_LIMIT_PER_MINUTE: '',
    ...PRODUCTION_VARS,
    ...overrides,
  } as Partial<Env>;
}

/** `GET /banks` with the production caller token (answered 503 before any upstream call). */
function banks(): Request {
  return new Request(`${GATEWAY_ORIGIN}/banks`, {
    headers: { Authorization: `Bearer ${LONG_CALLER_TOKEN}` },
  });
}

// [variable, a value it refuses in every mode]
const INVALID: readonly (readonly [SettingName, string])[] = [
  ['GATEWAY_MODE', 'staging'],
  ['UPSTREAM_BASE_URL', 'not a url'],
  ['UPSTREAM_BASE_URL', 'ftp://files.example/'],
  ['UPSTREAM_BASE_URL', 'https://user:pass@api.example/'],
  ['UPSTREAM_BASE_URL', 'https://api.example/?key=1'],
  ['UPSTREAM_TIMEOUT_MS', 'soon'],
  ['UPSTREAM_TIMEOUT_MS', '0'],
  ['UPSTREAM_KEY_ID', ''],
  ['UPSTREAM_SECRET', ''],
  ['MAX_BODY_BYTES', '1e3'],
  ['IDEMPOTENCY_RETENTION_SEC', '-1'],
  ['IDEMPOTENCY_LOCK_TIMEOUT_SEC', 'a minute'],
  ['BANKS_CACHE_TTL_SEC', '1h'],
  ['RESOLVE_CACHE_TTL_SEC', '-5'],
  ['RATE_LIMIT_PER_MINUTE', 'lots'],
  ['GATEWAY_CALLERS', '{broken'],
  ['GATEWAY_CALLERS', ''],
  ['ADMIN_TOKEN', 'has spaces in it'],
  ['ALLOW_UNSIGNED_WEBHOOKS', 'maybe'],
  ['CONFIRM_MONEY_EVENTS', 'sometimes'],
  ['ALLOW_LOCAL_SUBSCRIBERS', 'enabled'],
  ['SUBSCRIBER_PORTS', '8443;9443'],
  ['SUBSCRIBER_PORTS', '65536'],
  ['SUBSCRIBER_DNS_RESOLVER', 'http://dns.example/dns-query'],
  ['RELAY_RETENTION_DAYS', '0'],
];

// [variable, a value only local mode accepts, what production says]
const PRODUCTION_RULES: readonly (readonly [SettingName, string, string])[] = [
  ['UPSTREAM_BASE_URL', 'http://api.payments.example', 'must be an https URL outside local mode'],
  ['WEBHOOK_SECRET', '', 'must be set outside local mode (the provider signs webhooks with it)'],
  [
    'GATEWAY_CALLERS',
    JSON.stringify([{ name: 'checkout', token: 'short-token' }]),
    `every token must be at least ${MIN_TOKEN_LENGTH} characters outside local mode`,
  ],
  [
    'ADMIN_TOKEN',
    'short-admin',
    `must be at least ${MIN_TOKEN_LENGTH} characters outside local mode`,
  ],
  [
    'RATE_LIMIT_PER_MINUTE',
    '0',
    `must be at least 1 outside local mode (unset for ${DEFAULT_RATE_LIMIT_PER_MINUTE})`,
  ],
  ['ALLOW_LOCAL_SUBSCRIBERS', 'true', 'is a development switch, refused outside local mode'],
  ['ALLOW_UNSIGNED_WEBHOOKS', 'true', 'is a development switch, refused outside local mode'],
];

describe('settings', () => {
  describe('parseSettings', () => {
    it('should read the defaults of every optional setting', () => {
      const settings = settingsWith({}, PRODUCTION_VARS);
      expect(settings).toMatchObject({
        mode: 'production',
        upstream: { baseUrl: 'https://api.payments.example/', timeoutMs: 30_000 },
        maxBodyBytes: 65_536,
        idempotency: { retentionSec: 86_400, lockTimeoutSec: 60 },
        cacheTtlSec: { banks: 3600, resolve: 300 },
        rateLimitPerMinute: 600,
        adminToken: LONG_ADMIN_TOKEN,
        webhooks: { secret: 'provider-webhook-secret', allowUnsigned: false },
        confirmMoneyEvents: true,
        subscribers: { allowLocal: false, dnsResolver: 'https://cloudflare-dns.com/dns-query' },
        relayRetentionDays: 30,
      });
      expect([...settings.subscribers.ports]).toEqual([443, 80]);
      expect(settings.callers.map((caller) => caller.name)).toEqual(['checkout']);
    });

    it('should read each setting, spaces trimmed around values that are not secrets', () => {
      const settings = settingsWith({
        UPSTREAM_TIMEOUT_MS: ' 2500 ',
        MAX_BODY_BYTES: '2048',
        IDEMPOTENCY_RETENTION_SEC: '3600',
        IDEMPOTENCY_LOCK_TIMEOUT_SEC: '5',
        BANKS_CACHE_TTL_SEC: '0',
        RESOLVE_CACHE_TTL_SEC: '10',
        RATE_LIMIT_PER_MINUTE: '120',
        CONFIRM_MONEY_EVENTS: 'OFF',
        ALLOW_LOCAL_SUBSCRIBERS: ' yes ',
        ALLOW_UNSIGNED_WEBHOOKS: '1',
        SUBSCRIBER_PORTS: ' 8443 , 9443,1 ,65535',
        SUBSCRIBER_DNS_RESOLVER: 'https://dns.example.net/dns-query',
        RELAY_RETENTION_DAYS: '7',
        UPSTREAM_SECRET: ' spaced secret ',
      });
      expect(settings).toMatchObject({
        mode: 'local',
        upstream: { timeoutMs: 2500, secret: ' spaced secret ' },
        maxBodyBytes: 2048,
        idempotency: { retentionSec: 3600, lockTimeoutSec: 5 },
        // 0 turns a cache off; below KV's minimum of 60 s is raised to it.
        cacheTtlSec: { banks: 0, resolve: 60 },
        rateLimitPerMinute: 120,
        confirmMoneyEvents: false,
        webhooks: { secret: undefined, allowUnsigned: true },
        subscribers: { allowLocal: true, dnsResolver: 'https://dns.example.net/dns-query' },
        relayRetentionDays: 7,
      });
      expect([...settings.subscribers.ports]).toEqual([443, 80, 8443, 9443, 1, 65535]);
    });

    it('should read an unquoted TOML number or boolean as its text, and refuse other kinds', () => {
      const loaded = parseSettings({
        ...LOCAL_VARS,
        RATE_LIMIT_PER_MINUTE: 120,
        CONFIRM_MONEY_EVENTS: false,
      } as Record<string, unknown>);
      expect(loaded).toMatchObject({
        ok: true,
        settings: { rateLimitPerMinute: 120, confirmMoneyEvents: false },
      });
      expect(problemsWith({ MAX_BODY_BYTES: { bytes: 1 } as unknown as string })).toEqual({
        MAX_BODY_BYTES: 'expected a string',
      });
      const a = settingsOf({ ...env, RATE_LIMIT_PER_MINUTE: 100 } as unknown as Env);
      const b = settingsOf({ ...env, RATE_LIMIT_PER_MINUTE: 200 } as unknown as Env);
      expect([a.rateLimitPerMinute, b.rateLimitPerMinute]).toEqual([100, 200]);
    });

    it('should give a frozen object', () => {
      const settings = settingsWith({});
      expect(Object.isFrozen(settings)).toBe(true);
      expect(Object.isFrozen(settings.upstream)).toBe(true);
      expect(Object.isFrozen(settings.callers[0])).toBe(true);
    });

    it.each(INVALID)('should refuse %s = %j in every mode', (variable, value) => {
      expect(Object.keys(problemsWith({ [variable]: value }))).toEqual([variable]);
      expect(Object.keys(problemsWith({ [variable]: value }, PRODUCTION_VARS))).toEqual([variable]);
    });

    it('should report every invalid setting at once, in a stable order', () => {
      expect(
        Object.keys(
          problemsWith(
            { RELAY_RETENTION_DAYS: 'x', UPSTREAM_BASE_URL: 'http://api.example', ADMIN_TOKEN: '' },
            { ...PRODUCTION_VARS, GATEWAY_CALLERS: '[]', MAX_BODY_BYTES: '-1' },
          ),
        ),
      ).toEqual(['UPSTREAM_BASE_URL', 'MAX_BODY_BYTES', 'RELAY_RETENTION_DAYS']);
    });

    it('should refuse an admin token equal to a caller token, in every mode', () => {
      for (const base of [LOCAL_VARS, PRODUCTION_VARS]) {
        const callers = JSON.parse(base.GATEWAY_CALLERS ?? '[]') as { token: string }[];
        expect(problemsWith({ ADMIN_TOKEN: callers[0]?.token ?? '' }, base)).toEqual({
          ADMIN_TOKEN: "must differ from every caller's token",
        });
      }
    });

    it('should refuse two callers sharing a token or a name', () => {
      const twoTokens = [
        { name: 'a', token: LONG_CALLER_TOKEN },
        { name: 'b', token: LONG_CALLER_TOKEN },
      ];
      expect(problemsWith({ GATEWAY_CALLERS: JSON.stringify(twoTokens) })).toEqual({
        GATEWAY_CALLERS: expect.stringContaining('two callers share a token'),
      });
    });

    it('should never quote a value in a problem', () => {
      const marker = 'MARKER-7f3a';
      const values: Partial<Record<SettingName, string>> = {};
      for (const name of SETTING_NAMES) values[name] = `${marker} ${name}`;
      values.GATEWAY_CALLERS = JSON.stringify([{ name: marker, token: `${marker} x`, routes: 3 }]);
      const loaded = parseSettings(values);
      expect(loaded.ok).toBe(false);
      expect(JSON.stringify(loaded)).not.toContain(marker);
    });

    it('should treat an unset mode as production, never as local', () => {
      const { GATEWAY_MODE: _, ...unset } = LOCAL_VARS;
      expect(Object.keys(problemsWith({}, unset))).toEqual([
        'UPSTREAM_BASE_URL',
        'UPSTREAM_SECRET',
        'RATE_LIMIT_PER_MINUTE',
        'GATEWAY_CALLERS',
        'ADMIN_TOKEN',
        'WEBHOOK_SECRET',
      ]);
    });
  });

  describe('production rules', () => {
    it.each(PRODUCTION_RULES)(
      'should accept %s = %j in local mode only',
      (variable, value, problem) => {
        expect(problemsWith({ [variable]: value })).toEqual({});
        expect(problemsWith({ [variable]: value }, PRODUCTION_VARS)).toEqual({
          [variable]: problem,
        });
      },
    );

    it.each(PRODUCTION_RULES)(
      'should answer 503 configuration_error naming %s (%j) in production',
      async (variable, value) => {
        await expectConfigurationError(
          await fetchGateway(banks(), production({ [variable]: value })),
          [variable],
        );
      },
    );

    it('should serve with valid production settings', async () => {
      const res = await fetchGateway(
        new Request(`${GATEWAY_ORIGIN}/openapi.json`, {
          headers: { Authorization: `Bearer ${LONG_CALLER_TOKEN}` },
        }),
        production(),
      );
      expect(res.status).toBe(200);
      const health = await fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz`), production());
      expect(await health.json()).toEqual({ status: 'ok' });
    });
  });

  describe('invalid settings over HTTP', () => {
    it.each(INVALID)(
      'should answer 503 naming %s on every route but /healthz, which names none without the admin token',
      async (variable, value) => {
        const overrides = { [variable]: value } as Partial<Env>;
        for (const request of [
          gatewayRequest('/banks'),
          adminRequest('GET', '/admin/subscriptions'),
          await webhookRequest(JSON.stringify(envelope())),
          new Request(`${GATEWAY_ORIGIN}/no-such-path`),
        ]) {
          await expectConfigurationError(await fetchGateway(request, overrides), [variable]);
        }
        const requests = logs.lines().filter((line) => line.event === 'request');
        expect(requests.map((line) => line.route)).toEqual([
          'banks.list',
          'admin.subscriptions.list',
          'webhooks.ingest',
          null,
        ]);
        const health = await fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz`), overrides);
        expect(health.status).toBe(503);
        expect(await health.json()).toEqual({ status: 'misconfigured' });
      },
    );

    it('should answer 503 on a known path with another method too', async () => {
      for (const request of [
        new Request(`${GATEWAY_ORIGIN}/webhooks`),
        new Request(`${GATEWAY_ORIGIN}/banks`, { method: 'DELETE' }),
      ]) {
        await expectConfigurationError(await fetchGateway(request, { MAX_BODY_BYTES: 'x' }), [
          'MAX_BODY_BYTES',
        ]);
      }
    });

    it('should report it on the deep health check, naming it only to the admin token', async () => {
      const overrides = { UPSTREAM_TIMEOUT_MS: 'x' };
      const res = await fetchGateway(new Request(`${GATEWAY_ORIGIN}/healthz?deep=1`), overrides);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'misconfigured' });
      const admin = await fetchGateway(adminRequest('GET', '/healthz?deep=1'), overrides);
      expect(admin.status).toBe(503);
      expect(await admin.json()).toEqual({
        status: 'misconfigured',
        invalid_settings: ['UPSTREAM_TIMEOUT_MS'],
      });
    });

    it('should log each problem once per isolate, never the value', async () => {
      const secret = 'a-secret-value-never-logged';
      const overrides = { WEBHOOK_SECRET: secret, ADMIN_TOKEN: `${secret} with spaces` };
      for (let i = 0; i < 3; i++) {
        await expectConfigurationError(await fetchGateway(gatewayRequest('/banks'), overrides), [
          'ADMIN_TOKEN',
        ]);
      }
      expect(logs.lines().filter((line) => line.event === 'config_invalid')).toEqual([
        {
          level: 'error',
          event: 'config_invalid',
          setting: 'ADMIN_TOKEN',
          problem: 'expected visible ASCII only',
        },
      ]);
      expect(logs.text()).not.toContain(secret);
    });

    it('should read the settings once per env object and per set of values', () => {
      const a = { ...env, RELAY_RETENTION_DAYS: '9' } as Env;
      const b = { ...env, RELAY_RETENTION_DAYS: '9' } as Env;
      expect(settingsOf(a)).toBe(settingsOf(a));
      expect(settingsOf(b)).toBe(settingsOf(a));
      expect(settingsOf({ ...a, RELAY_RETENTION_DAYS: '10' } as Env)).not.toBe(settingsOf(a));
    });
  });

  describe('background work while the settings are invalid', () => {
    it('should leave deliveries pending, sending nothing, until the settings are fixed', async () => {
      const stored = await storeDelivery();
      const broken = await runQueue(
        DELIVERIES_QUEUE,
        [{ body: { deliveryId: stored.deliveryId } }],
        {
          SUBSCRIBER_PORTS: 'x',
        },
      );
      expect(broken.explicitAcks).toEqual(['msg-0']);
      expect(broken.retryMessages).toEqual([]);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('pending');
      expect(await receivedUnder(stored.key)).toEqual([]);
      const fixed = await runQueue(DELIVERIES_QUEUE, [{ body: { deliveryId: stored.deliveryId } }]);
      expect(fixed.explicitAcks).toEqual(['msg-0']);
      expect((await findDelivery(env.DB, stored.deliveryId))?.status).toBe('delivered');
    });

    it('should skip the relay sweep (no purge by a retention nobody set), logged', async () => {
      const stored = await storeDelivery();
      const now = Date.now() + 400 * 86_400_000;
      await runScheduled(createScheduledController({ scheduledTime: now }), {
        ...env,
        RELAY_RETENTION_DAYS: 'forever',
      });
      expect(await findDelivery(env.DB, stored.deliveryId)).toBeDefined();
      expect(logs.lines()).toContainEqual({
        level: 'error',
        event: 'relay_sweep_skipped',
        reason: 'configuration_error',
      });
      expect(loadSettings({ ...env, RELAY_RETENTION_DAYS: 'forever' } as Env).ok).toBe(false);
    });
  });

  it('should keep the test bindings valid (local mode)', () => {
    expect(loadSettings(env).ok).toBe(true);
    expect(ADMIN_TOKEN).not.toBe('');
  });
});
