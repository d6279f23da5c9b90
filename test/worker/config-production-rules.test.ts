/**
 * The production rules that keep a deployment from being made unsafe by its settings:
 * capped body limits (the open webhook ingress has its own, small in every mode), an
 * idempotency retention of at least the claim lock, long, varied and distinct secrets and
 * tokens, and no well-known service port for subscribers. Each is refused outside local
 * mode with 503 `configuration_error` naming the variable, never its value.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  MAX_PRODUCTION_BODY_BYTES,
  MAX_WEBHOOK_BODY_BYTES,
  MIN_DISTINCT_CHARACTERS,
  MIN_PRODUCTION_RELAY_RETENTION_DAYS,
  MIN_PRODUCTION_RETENTION_SEC,
  MIN_PROVIDER_SECRET_LENGTH,
  parseSettings,
  type SettingName,
} from '../../worker/config.ts';
import {
  LIVE_MERCHANT_SECRET,
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
  useCapturedLogs,
} from './helpers.ts';
import { envelope, webhookRequest } from './routes/webhook-helpers.ts';

const logs = useCapturedLogs();

type Vars = Partial<Record<SettingName, string>>;

/** The problems of `base` with `overrides`, as `{ variable: problem }`. */
function problemsWith(overrides: Vars, base: Vars): Record<string, string> {
  const loaded = parseSettings({ ...base, ...overrides });
  return loaded.ok ? {} : Object.fromEntries(loaded.problems.map((p) => [p.variable, p.problem]));
}

const callers = (token: string) => JSON.stringify([{ name: 'checkout', token }]);

const LENGTH_OF_SECRET = `must be at least ${MIN_PROVIDER_SECRET_LENGTH} characters outside local mode`;
const VARIED = `at least ${MIN_DISTINCT_CHARACTERS} different characters outside local mode (refused as low-entropy)`;
const DIFFERENT = 'must differ from UPSTREAM_SECRET and WEBHOOK_SECRET outside local mode';
const RETENTION = `must be at least ${MIN_PRODUCTION_RETENTION_SEC} seconds and at least the claim lock (IDEMPOTENCY_LOCK_TIMEOUT_SEC, and twice UPSTREAM_TIMEOUT_MS) outside local mode`;
const PORTS =
  'must not list a system port (below 1024) nor a well-known service port (databases, caches, queues, cluster APIs, remote access) outside local mode';

// [what, the overrides only local mode accepts, the variable refused, what production says]
const UNSAFE: readonly (readonly [string, Vars, SettingName, string])[] = [
  [
    'a proxy body limit over 1 MiB',
    { MAX_BODY_BYTES: String(MAX_PRODUCTION_BODY_BYTES + 1) },
    'MAX_BODY_BYTES',
    'must be at most 1048576 bytes (1 MiB) outside local mode',
  ],
  [
    'a retention of 60 s',
    { IDEMPOTENCY_RETENTION_SEC: '60' },
    'IDEMPOTENCY_RETENTION_SEC',
    RETENTION,
  ],
  [
    'a retention just under an hour',
    { IDEMPOTENCY_RETENTION_SEC: String(MIN_PRODUCTION_RETENTION_SEC - 1) },
    'IDEMPOTENCY_RETENTION_SEC',
    RETENTION,
  ],
  [
    'a retention shorter than the lock timeout',
    { IDEMPOTENCY_RETENTION_SEC: '7199', IDEMPOTENCY_LOCK_TIMEOUT_SEC: '7200' },
    'IDEMPOTENCY_RETENTION_SEC',
    RETENTION,
  ],
  [
    'a retention shorter than twice the upstream timeout',
    {
      IDEMPOTENCY_RETENTION_SEC: '3600',
      UPSTREAM_TIMEOUT_MS: '600000',
      IDEMPOTENCY_LOCK_TIMEOUT_SEC: '4000',
    },
    'IDEMPOTENCY_RETENTION_SEC',
    RETENTION,
  ],
  [
    'a relay retention shorter than the retry schedule and a day',
    { RELAY_RETENTION_DAYS: String(MIN_PRODUCTION_RELAY_RETENTION_DAYS - 1) },
    'RELAY_RETENTION_DAYS',
    `must be at least ${MIN_PRODUCTION_RELAY_RETENTION_DAYS} days outside local mode: a delivery is retried for up to 33 h, and its event must outlive its last attempt by a day`,
  ],
  ['a 1-character webhook secret', { WEBHOOK_SECRET: 'x' }, 'WEBHOOK_SECRET', LENGTH_OF_SECRET],
  [
    'a webhook secret of 32 identical characters',
    { WEBHOOK_SECRET: 'w'.repeat(32) },
    'WEBHOOK_SECRET',
    `must have ${VARIED}`,
  ],
  ['a short merchant secret', { UPSTREAM_SECRET: 'secret' }, 'UPSTREAM_SECRET', LENGTH_OF_SECRET],
  [
    'a merchant secret of two characters repeated',
    { UPSTREAM_SECRET: 'ab'.repeat(16) },
    'UPSTREAM_SECRET',
    `must have ${VARIED}`,
  ],
  [
    'an admin token of 32 identical characters',
    { ADMIN_TOKEN: 'a'.repeat(32) },
    'ADMIN_TOKEN',
    `must have ${VARIED}`,
  ],
  [
    'a caller token of 40 identical characters',
    { GATEWAY_CALLERS: callers('c'.repeat(40)) },
    'GATEWAY_CALLERS',
    `every token must have ${VARIED}`,
  ],
  [
    'a caller token of five characters repeated',
    { GATEWAY_CALLERS: callers('abcde'.repeat(8)) },
    'GATEWAY_CALLERS',
    `every token must have ${VARIED}`,
  ],
  [
    'the admin token equal to the webhook secret',
    { WEBHOOK_SECRET: LONG_ADMIN_TOKEN },
    'ADMIN_TOKEN',
    DIFFERENT,
  ],
  [
    'the admin token equal to the merchant secret',
    { UPSTREAM_SECRET: LONG_ADMIN_TOKEN },
    'ADMIN_TOKEN',
    DIFFERENT,
  ],
  [
    'ADMIN_TOKEN == WEBHOOK_SECRET == UPSTREAM_SECRET',
    { UPSTREAM_SECRET: LONG_ADMIN_TOKEN, WEBHOOK_SECRET: LONG_ADMIN_TOKEN },
    'ADMIN_TOKEN',
    DIFFERENT,
  ],
  [
    'a caller token equal to the merchant secret',
    { UPSTREAM_SECRET: LONG_CALLER_TOKEN },
    'GATEWAY_CALLERS',
    `every token ${DIFFERENT}`,
  ],
  [
    'a caller token equal to the webhook secret',
    { WEBHOOK_SECRET: LONG_CALLER_TOKEN },
    'GATEWAY_CALLERS',
    `every token ${DIFFERENT}`,
  ],
  ['subscriber port 22 (ssh)', { SUBSCRIBER_PORTS: '22' }, 'SUBSCRIBER_PORTS', PORTS],
  ['subscriber ports 22, 25, 6379', { SUBSCRIBER_PORTS: '22,25,6379' }, 'SUBSCRIBER_PORTS', PORTS],
  [
    'subscriber port 5432 after a safe one',
    { SUBSCRIBER_PORTS: '8443, 5432' },
    'SUBSCRIBER_PORTS',
    PORTS,
  ],
  ['subscriber port 1023', { SUBSCRIBER_PORTS: '1023' }, 'SUBSCRIBER_PORTS', PORTS],
];

describe('production rules against unsafe settings', () => {
  it('should keep events 3 days at least: the retries span about 33 h, then a day', () => {
    expect(MIN_PRODUCTION_RELAY_RETENTION_DAYS).toBe(3);
    expect(problemsWith({ RELAY_RETENTION_DAYS: '3' }, PRODUCTION_VARS)).toEqual({});
    expect(problemsWith({ RELAY_RETENTION_DAYS: '1' }, LOCAL_VARS)).toEqual({});
  });

  it.each(UNSAFE)(
    'should refuse %s outside local mode only',
    (_what, overrides, variable, problem) => {
      expect(problemsWith(overrides, LOCAL_VARS)).toEqual({});
      expect(problemsWith(overrides, PRODUCTION_VARS)).toEqual({ [variable]: problem });
    },
  );

  it.each(UNSAFE)(
    'should answer 503 configuration_error for %s, naming the variable, never the value',
    async (_what, overrides, variable) => {
      const production = {
        RATE_LIMIT_PER_MINUTE: '',
        WEBHOOK_RATE_LIMIT_PER_MINUTE: '',
        ...PRODUCTION_VARS,
        ...overrides,
      };
      const res = await fetchGateway(
        new Request(`${GATEWAY_ORIGIN}/banks`, {
          headers: { Authorization: `Bearer ${LONG_CALLER_TOKEN}` },
        }),
        production as Partial<Env>,
      );
      await expectConfigurationError(res, [variable]);
      const logged = logs.text();
      expect(logged).toContain(`"setting":"${variable}"`);
      for (const value of Object.values(overrides)) {
        // Port lists and numbers are no secrets, but no value is quoted either way.
        if (value.length >= 8) expect(logged).not.toContain(value);
      }
    },
  );

  it('should accept the limits themselves and safe values in production', () => {
    const settings = settingsWith(
      {
        MAX_BODY_BYTES: String(MAX_PRODUCTION_BODY_BYTES),
        WEBHOOK_MAX_BODY_BYTES: String(MAX_WEBHOOK_BODY_BYTES),
        IDEMPOTENCY_RETENTION_SEC: String(MIN_PRODUCTION_RETENTION_SEC),
        UPSTREAM_TIMEOUT_MS: '600000',
        IDEMPOTENCY_LOCK_TIMEOUT_SEC: '60',
        WEBHOOK_SECRET: 'abcdef'.padEnd(MIN_PROVIDER_SECRET_LENGTH, 'f'),
        SUBSCRIBER_PORTS: '1024, 8443, 9443, 65535',
      },
      PRODUCTION_VARS,
    );
    expect(settings.maxBodyBytes).toBe(MAX_PRODUCTION_BODY_BYTES);
    expect(settings.webhooks.maxBodyBytes).toBe(MAX_WEBHOOK_BODY_BYTES);
    expect([...settings.subscribers.ports]).toEqual([443, 80, 1024, 8443, 9443, 65535]);
  });

  it('should accept a webhook secret equal to the merchant secret (the provider signs with it)', () => {
    const settings = settingsWith({ WEBHOOK_SECRET: LIVE_MERCHANT_SECRET }, PRODUCTION_VARS);
    expect(settings.webhooks.secret).toBe(settings.upstream.secret);
  });
});

describe('the webhook ingress body limit', () => {
  it('should default to 256 KiB and refuse more than 1 MiB in every mode', () => {
    expect(settingsWith({}, PRODUCTION_VARS).webhooks.maxBodyBytes).toBe(256 * 1024);
    for (const base of [LOCAL_VARS, PRODUCTION_VARS]) {
      expect(
        problemsWith({ WEBHOOK_MAX_BODY_BYTES: String(MAX_WEBHOOK_BODY_BYTES + 1) }, base),
      ).toEqual({ WEBHOOK_MAX_BODY_BYTES: 'expected a whole number of bytes from 1 to 1048576' });
    }
  });

  it('should answer 413 past its own limit even when MAX_BODY_BYTES is larger, before the signature', async () => {
    const body = JSON.stringify(envelope({ data: { padding: 'x'.repeat(2 * 1024 * 1024) } }));
    // A valid signature: the old ingress, which read up to MAX_BODY_BYTES, accepted it.
    const res = await fetchGateway(await webhookRequest(body), {
      MAX_BODY_BYTES: String(10 * 1024 * 1024),
    } as Partial<Env>);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
    const small = await fetchGateway(await webhookRequest(JSON.stringify(envelope())), {
      WEBHOOK_MAX_BODY_BYTES: '100',
    } as Partial<Env>);
    expect(small.status).toBe(413);
    expect(env.WEBHOOK_MAX_BODY_BYTES).toBe('262144');
  });
});
