/**
 * The gateway's settings: every variable and secret of `Env` read by one valibot schema
 * into one typed, frozen {@link Settings} object, kept per isolate. Nothing else in
 * worker/ reads a setting from `env`; bindings (`DB`, `CACHE`, `DELIVERIES`,
 * `RATE_LIMITER`) are used directly.
 *
 * An invalid setting is never silently replaced by a default: the gateway answers 503
 * `configuration_error` naming the variable (never its value), logs the problem once per
 * isolate, and `GET /healthz` reports it. Outside local mode the production rules apply
 * (https upstream, a webhook secret, long, varied and distinct secrets and tokens, rate
 * limiting on, a capped body limit, an idempotency retention of at least the claim lock,
 * no well-known service port for subscribers, no development switches). Local mode is only ever switched on explicitly, by
 * `GATEWAY_MODE=local` (`npm start` sets it); an unset mode is production.
 *
 * The settings are one table (worker/config/table.ts): a row per variable or secret with
 * its default, reader, field, doc line and production rule. docs/configuration.md is
 * generated from it (`npm run docs:configuration`).
 */
export {
  /** The production rules between settings (the health check reads which settings the admin token's read). */
  CROSS_RULES,
  /** @internal Exported for the tests, which check against the same value. */
  MIN_PRODUCTION_RETENTION_SEC,
} from './config/production-rules.ts';
export {
  loadSettings,
  /** @internal Exported for the tests, which parse a set of variables directly. */
  parseSettings,
  settingsOf,
} from './config/read.ts';
export {
  /** @internal Exported for the tests, which check against the same value. */
  MAX_PRODUCTION_BODY_BYTES,
  /** @internal Exported for the tests, which check against the same value. */
  MAX_WEBHOOK_BODY_BYTES,
  /** @internal Exported for the tests, which check against the same value. */
  MIN_DISTINCT_CHARACTERS,
  /** @internal Exported for the tests, which check against the same value. */
  MIN_PROVIDER_SECRET_LENGTH,
  /** @internal Exported for the tests, which check against the same value. */
  MIN_TOKEN_LENGTH,
  /** @internal Exported for the tests, which check against the same list. */
  SERVICE_PORTS,
} from './config/safety.ts';
export {
  /** @internal Exported for the tests, which check against the same value. */
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_SUBSCRIBER_SETTINGS,
  /** @internal Exported for the tests, which check against the same value. */
  MIN_PRODUCTION_RELAY_RETENTION_DAYS,
  /** @internal Exported for the tests, which check against the same value. */
  SETTING_NAMES,
  /** The settings table (the health check reads the admin token by its row alone). */
  SETTINGS,
  type SettingName,
  type Settings,
  type SubscriberSettings,
} from './config/table.ts';
