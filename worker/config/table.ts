/**
 * Every variable and secret the gateway reads, one row each, in the order problems are
 * reported: how it is set, its default, how its text is read, where it goes in
 * {@link Settings}, its line of docs/configuration.md (generated from this table by
 * `npm run docs:configuration`) and its production rule. `wrangler.toml` sets the
 * variables to the defaults given here, which a test checks.
 */
import * as v from 'valibot';
import { RETRY_SPAN_SEC } from '../relay/retry-schedule.ts';
import {
  DIFFERENT_CHARACTERS,
  isOpenablePort,
  isVaried,
  MAX_PRODUCTION_BODY_BYTES,
  MAX_WEBHOOK_BODY_BYTES,
  MIN_PROVIDER_SECRET_LENGTH,
  MIN_TOKEN_LENGTH,
  SERVICE_PORTS,
  strongSecret,
} from './safety.ts';
import { type SettingsOf, setting } from './setting.ts';
import {
  absoluteUrl,
  anyText,
  cacheLifetime,
  callers,
  flag,
  STANDARD_PORTS,
  shardGenerations,
  subscriberPorts,
  token,
  wholeNumber,
} from './values.ts';

/** `local` relaxes the production rules for `npm start` and tests; anything else is `production`. */
export type GatewayMode = 'local' | 'production';

const GATEWAY_MODES: readonly GatewayMode[] = ['local', 'production'];

/**
 * Requests per minute per caller when `RATE_LIMIT_PER_MINUTE` is unset.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/**
 * Requests per minute to the webhook ingress per client address when
 * `WEBHOOK_RATE_LIMIT_PER_MINUTE` is unset: 100 a second, above what one of a provider's
 * sending addresses needs, low enough that one client replaying signed bodies cannot flood
 * the event store.
 */
const DEFAULT_WEBHOOK_RATE_LIMIT_PER_MINUTE = 6000;

/**
 * Requests per minute one rate limiter object is given when `RATE_LIMIT_PER_OBJECT_PER_MINUTE`
 * is unset: 500 a second, half the rate the platform serves one Durable Object at, leaving
 * the other half for the requests it refuses.
 */
const DEFAULT_RATE_LIMIT_PER_OBJECT_PER_MINUTE = 30_000;

/** The platform's rate for one Durable Object, about 1,000 requests a second, per minute. */
const MAX_RATE_LIMIT_PER_OBJECT_PER_MINUTE = 60_000;

/**
 * The smallest `RATE_LIMIT_PER_OBJECT_PER_MINUTE` outside local mode: the largest limit
 * (1,000,000 a minute) then takes at most 1,000 objects.
 */
const MIN_PRODUCTION_RATE_LIMIT_PER_OBJECT_PER_MINUTE = 1000;

/** The resolver asked when `SUBSCRIBER_DNS_RESOLVER` is unset. */
const DEFAULT_DNS_RESOLVER = 'https://cloudflare-dns.com/dns-query';

/** The largest request body a Worker may receive (Cloudflare's 100 MB limit), in bytes. */
const MAX_REQUEST_BODY_BYTES = 100 * 1024 * 1024;

const DEVELOPMENT_SWITCH = 'is a development switch, refused outside local mode';

/**
 * The shortest relay retention outside local mode, in days: the retry schedule's span (at its
 * jitter's longest) and a day, so an event outlives its delivery's last attempt.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const MIN_PRODUCTION_RELAY_RETENTION_DAYS = Math.ceil((RETRY_SPAN_SEC + 86_400) / 86_400);

/** The settings table: one row per variable or secret the gateway reads. */
export const SETTINGS = {
  GATEWAY_MODE: setting({
    kind: 'var',
    unset: { default: 'production' },
    value: v.pipe(v.string(), v.picklist(GATEWAY_MODES, 'expected local or production')),
    field: 'mode',
    doc: '`local` or `production`',
  }),
  UPSTREAM_BASE_URL: setting({
    kind: 'var',
    unset: { required: true },
    value: absoluteUrl(['http:', 'https:'], 'an http(s) URL'),
    field: 'upstream.baseUrl',
    doc: 'absolute http(s) URL, no query, fragment or credentials; may carry a path prefix',
    production: [
      {
        holds: (url) => url.startsWith('https:'),
        problem: 'must be an https URL outside local mode',
      },
    ],
  }),
  UPSTREAM_TIMEOUT_MS: setting({
    kind: 'var',
    unset: { default: '30000' },
    value: wholeNumber(1, 600_000, 'milliseconds'),
    field: 'upstream.timeoutMs',
    doc: '1 to 600,000 milliseconds, body read included; past it the caller gets 504',
  }),
  UPSTREAM_KEY_ID: setting({
    kind: 'secret',
    unset: { required: true },
    value: anyText,
    field: 'upstream.keyId',
    doc: 'the merchant key id requests are signed with',
  }),
  UPSTREAM_SECRET: setting({
    kind: 'secret',
    unset: { required: true },
    value: anyText,
    field: 'upstream.secret',
    doc: 'the merchant secret requests are signed with',
    production: strongSecret(MIN_PROVIDER_SECRET_LENGTH),
  }),
  MAX_BODY_BYTES: setting({
    kind: 'var',
    unset: { default: '65536' },
    value: wholeNumber(1, MAX_REQUEST_BODY_BYTES, 'bytes'),
    field: 'maxBodyBytes',
    doc: 'largest body of a proxied or admin request: 1 to 104,857,600 bytes; larger bodies get 413',
    production: [
      {
        holds: (bytes) => bytes <= MAX_PRODUCTION_BODY_BYTES,
        problem: `must be at most ${MAX_PRODUCTION_BODY_BYTES} bytes (1 MiB) outside local mode`,
      },
    ],
  }),
  WEBHOOK_MAX_BODY_BYTES: setting({
    kind: 'var',
    unset: { default: '262144' },
    value: wholeNumber(1, MAX_WEBHOOK_BODY_BYTES, 'bytes'),
    field: 'webhooks.maxBodyBytes',
    doc: 'largest body of `POST /webhooks`, read before its signature is checked: 1 to 1,048,576 bytes (1 MiB) in every mode; larger bodies get 413',
  }),
  WEBHOOK_RATE_LIMIT_PER_MINUTE: setting({
    kind: 'var',
    unset: { default: String(DEFAULT_WEBHOOK_RATE_LIMIT_PER_MINUTE) },
    value: wholeNumber(0, 1_000_000, 'requests'),
    field: 'webhooks.rateLimitPerMinute',
    doc: 'requests a minute to `POST /webhooks` per client address (IPv6 per /64), 0 (off) to 1,000,000; over it 429 with `Retry-After`, which the provider retries',
    production: [
      {
        holds: (limit) => limit > 0,
        problem: `must be at least 1 outside local mode (unset for ${DEFAULT_WEBHOOK_RATE_LIMIT_PER_MINUTE})`,
      },
    ],
  }),
  IDEMPOTENCY_RETENTION_SEC: setting({
    kind: 'var',
    unset: { default: '86400' },
    value: wholeNumber(60, 31_536_000, 'seconds'),
    field: 'idempotency.retentionSec',
    doc: '60 to 31,536,000 seconds a completed idempotency key is kept (an in-flight one is never purged)',
  }),
  IDEMPOTENCY_LOCK_TIMEOUT_SEC: setting({
    kind: 'var',
    unset: { default: '60' },
    value: wholeNumber(1, 86_400, 'seconds'),
    field: 'idempotency.lockTimeoutSec',
    doc: '1 to 86,400 seconds before an in-flight claim is presumed dead',
  }),
  D1_SHARDS: setting({
    kind: 'var',
    unset: { default: 'DB' },
    value: shardGenerations,
    field: 'shards',
    doc: 'the D1 databases webhook events (with their deliveries and attempts) are spread over, as generations: binding names, comma-separated, then for each later generation `; <ISO 8601 start>=<binding names>` (`DB; 2027-01-04T00:00:00Z=DB,DB_SHARD_1,DB_SHARD_2`); an event stays in the shard of the generation it was written under for its whole retention; subscriptions stay in `DB`; docs/deploy.md "Adding a shard"',
  }),
  BANKS_CACHE_TTL_SEC: setting({
    kind: 'var',
    unset: { default: '3600' },
    value: cacheLifetime,
    field: 'cacheTtlSec.banks',
    doc: "bank list cache: 0 (off) to 31,536,000 seconds; 1 to 59 are raised to KV's minimum of 60",
  }),
  RESOLVE_CACHE_TTL_SEC: setting({
    kind: 'var',
    unset: { default: '300' },
    value: cacheLifetime,
    field: 'cacheTtlSec.resolve',
    doc: 'account resolution cache: as `BANKS_CACHE_TTL_SEC`',
  }),
  RATE_LIMIT_PER_MINUTE: setting({
    kind: 'var',
    unset: { default: String(DEFAULT_RATE_LIMIT_PER_MINUTE) },
    value: wholeNumber(0, 1_000_000, 'requests'),
    field: 'rateLimitPerMinute',
    doc: 'requests a minute per caller, 0 (off) to 1,000,000',
    production: [
      {
        holds: (limit) => limit > 0,
        problem: `must be at least 1 outside local mode (unset for ${DEFAULT_RATE_LIMIT_PER_MINUTE})`,
      },
    ],
  }),
  RATE_LIMIT_PER_OBJECT_PER_MINUTE: setting({
    kind: 'var',
    unset: { default: String(DEFAULT_RATE_LIMIT_PER_OBJECT_PER_MINUTE) },
    value: wholeNumber(1, MAX_RATE_LIMIT_PER_OBJECT_PER_MINUTE, 'requests'),
    field: 'rateLimitPerObjectPerMinute',
    doc: 'the most requests a minute one rate limiter Durable Object is asked to allow, 1 to 60,000 (the platform serves one object about 1,000 a second); a per-caller or per-address limit above it is spread over `ceil(limit / this)` objects, each allowing its share',
    production: [
      {
        holds: (perObject) => perObject >= MIN_PRODUCTION_RATE_LIMIT_PER_OBJECT_PER_MINUTE,
        problem: `must be at least ${MIN_PRODUCTION_RATE_LIMIT_PER_OBJECT_PER_MINUTE} outside local mode (unset for ${DEFAULT_RATE_LIMIT_PER_OBJECT_PER_MINUTE})`,
      },
    ],
  }),
  GATEWAY_CALLERS: setting({
    kind: 'secret',
    unset: { required: true },
    value: callers,
    field: 'callers',
    doc: 'JSON array of `{ "name", "token", "routes"? }`; names and tokens unique, tokens visible ASCII; `[]` lets nobody in',
    production: [
      {
        holds: (list) => list.every((caller) => caller.token.length >= MIN_TOKEN_LENGTH),
        problem: `every token must be at least ${MIN_TOKEN_LENGTH} characters outside local mode`,
      },
      {
        holds: (list) => list.every((caller) => isVaried(caller.token)),
        problem: `every token must have ${DIFFERENT_CHARACTERS}`,
      },
    ],
  }),
  ADMIN_TOKEN: setting({
    kind: 'secret',
    unset: { off: 'admin API off' },
    value: token,
    field: 'adminToken',
    doc: 'visible ASCII, different from every caller token',
    production: strongSecret(MIN_TOKEN_LENGTH),
  }),
  WEBHOOK_SECRET: setting({
    kind: 'secret',
    unset: { off: 'ingress answers 503' },
    value: anyText,
    field: 'webhooks.secret',
    doc: 'the secret the provider signs webhooks with',
    production: [
      {
        holds: (secret) => secret !== undefined,
        problem: 'must be set outside local mode (the provider signs webhooks with it)',
      },
      ...strongSecret(MIN_PROVIDER_SECRET_LENGTH),
    ],
  }),
  ALLOW_UNSIGNED_WEBHOOKS: setting({
    kind: 'var',
    unset: { default: 'false' },
    value: flag,
    field: 'webhooks.allowUnsigned',
    doc: 'switch: accept unsigned webhooks while `WEBHOOK_SECRET` is unset',
    production: [{ holds: (allowed) => !allowed, problem: DEVELOPMENT_SWITCH }],
  }),
  CONFIRM_MONEY_EVENTS: setting({
    kind: 'var',
    unset: { default: 'true' },
    value: flag,
    field: 'confirmMoneyEvents',
    doc: 'switch: confirm money webhooks upstream before fan-out',
  }),
  ALLOW_LOCAL_SUBSCRIBERS: setting({
    kind: 'var',
    unset: { default: 'false' },
    value: flag,
    field: 'subscribers.allowLocal',
    doc: 'switch: loopback subscriber URLs (http or https, any port)',
    production: [{ holds: (allowed) => !allowed, problem: DEVELOPMENT_SWITCH }],
  }),
  SUBSCRIBER_PORTS: setting({
    kind: 'var',
    unset: { default: '' },
    value: subscriberPorts,
    field: 'subscribers.ports',
    doc: `comma-separated ports (1 to 65535) subscriber URLs may use besides ${STANDARD_PORTS.join(' and ')}; production refuses those below 1024 and ${SERVICE_PORTS.join(', ')}`,
    production: [
      {
        holds: (ports) => [...ports].every(isOpenablePort),
        problem:
          'must not list a system port (below 1024) nor a well-known service port (databases, caches, queues, cluster APIs, remote access) outside local mode',
      },
    ],
  }),
  SUBSCRIBER_DNS_RESOLVER: setting({
    kind: 'var',
    unset: { default: DEFAULT_DNS_RESOLVER },
    value: absoluteUrl(['https:'], 'an https URL'),
    field: 'subscribers.dnsResolver',
    doc: 'https URL of a DNS-over-HTTPS resolver (JSON API), asked before each delivery',
  }),
  RELAY_RETENTION_DAYS: setting({
    kind: 'var',
    unset: { default: '30' },
    value: wholeNumber(1, 3650, 'days'),
    field: 'relayRetentionDays',
    doc: `1 to 3650 days before webhook events are purged; outside local mode at least ${MIN_PRODUCTION_RELAY_RETENTION_DAYS} (the retry schedule's span and a day)`,
    production: [
      {
        // A purge before the last retry would delete a pending delivery without an attempt
        // or a dead letter: nothing would say it was never delivered.
        holds: (days) => days >= MIN_PRODUCTION_RELAY_RETENTION_DAYS,
        problem: `must be at least ${MIN_PRODUCTION_RELAY_RETENTION_DAYS} days outside local mode: a delivery is retried for up to ${Math.round(RETRY_SPAN_SEC / 3600)} h, and its event must outlive its last attempt by a day`,
      },
    ],
  }),
  RELAY_BACKLOG_ALERT_SEC: setting({
    kind: 'var',
    unset: { default: '600' },
    value: wholeNumber(0, 86_400, 'seconds'),
    field: 'relayBacklogAlertSec',
    doc: '0 to 86400 seconds a due delivery may wait before the cron raises relay.backlog (at most once an hour); 0 = never',
  }),
  SUBSCRIPTION_DISABLE_AFTER_HOURS: setting({
    kind: 'var',
    unset: { default: '24' },
    value: wholeNumber(0, 720, 'hours'),
    field: 'subscriptionDisableAfterHours',
    doc: '0 to 720 hours: a subscription whose every attempt failed for this long is disabled; 0 = never for failures (a 410 still disables)',
  }),
  SUBSCRIPTION_CACHE_SEC: setting({
    kind: 'var',
    unset: { default: '10' },
    value: wholeNumber(0, 300, 'seconds'),
    field: 'subscriptionCacheSec',
    doc: '0 to 300 seconds an isolate reuses its copy of the subscriptions for the fan-out and the deliveries; a change made through the admin API is seen at once by its outbox and by the isolate that made it, by the others within this time; 0 = read on every use',
  }),
};

/** The name of a variable or secret the gateway reads. */
export type SettingName = keyof typeof SETTINGS;

/** Every variable and secret the gateway reads, in the order problems are reported. */
export const SETTING_NAMES = Object.freeze(Object.keys(SETTINGS) as SettingName[]);

/**
 * The gateway's settings, as `settingsOf` reads them from `Env`: each row's value at its
 * field (see {@link SETTINGS} for what each means and its unit), frozen.
 */
export type Settings = SettingsOf<typeof SETTINGS>;

/** The settings of the subscriber URL rules and of the DNS check before each delivery. */
export type SubscriberSettings = Settings['subscribers'];

/**
 * The subscriber settings with the strictest values, as the OpenAPI document describes
 * the rules: no local subscribers, ports 443 and 80 only, the default resolver.
 */
export const DEFAULT_SUBSCRIBER_SETTINGS: SubscriberSettings = Object.freeze({
  allowLocal: false,
  ports: new Set(STANDARD_PORTS),
  dnsResolver: DEFAULT_DNS_RESOLVER,
});
