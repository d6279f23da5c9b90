/**
 * Settings for tests of worker/config.ts and of the code that takes parsed settings:
 * a complete, valid set of variables and secrets for each mode.
 */
import { parseSettings, type SettingName, type Settings } from '../../worker/config.ts';

/** A caller token and an admin token long enough for production (32+ characters). */
export const LONG_CALLER_TOKEN = 'caller-token-0123456789abcdefghijklmnop';
export const LONG_ADMIN_TOKEN = 'admin-token-0123456789abcdefghijklmnopq';

/** A merchant secret long and varied enough for production (16+ characters). */
export const LIVE_MERCHANT_SECRET = 'live-merchant-secret-7c41';

/** Valid local-mode settings: a loopback upstream, short tokens, no rate limit. */
export const LOCAL_VARS: Readonly<Partial<Record<SettingName, string>>> = {
  GATEWAY_MODE: 'local',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:8788',
  UPSTREAM_KEY_ID: 'sandbox-key',
  UPSTREAM_SECRET: 'sandbox-secret',
  GATEWAY_CALLERS: JSON.stringify([{ name: 'dev', token: 'dev-gateway-token' }]),
  ADMIN_TOKEN: 'dev-admin-token',
  RATE_LIMIT_PER_MINUTE: '0',
};

/** Valid production settings, as `wrangler.toml` and the deploy guide set them. */
export const PRODUCTION_VARS: Readonly<Partial<Record<SettingName, string>>> = {
  GATEWAY_MODE: 'production',
  UPSTREAM_BASE_URL: 'https://api.payments.example',
  UPSTREAM_KEY_ID: 'live-key',
  UPSTREAM_SECRET: LIVE_MERCHANT_SECRET,
  GATEWAY_CALLERS: JSON.stringify([{ name: 'checkout', token: LONG_CALLER_TOKEN }]),
  ADMIN_TOKEN: LONG_ADMIN_TOKEN,
  WEBHOOK_SECRET: 'provider-webhook-secret',
};

/**
 * The settings of `base` with `overrides`, which must be valid.
 *
 * @throws {Error} naming the problems when they are not.
 */
export function settingsWith(
  overrides: Partial<Record<SettingName, string>>,
  base: Partial<Record<SettingName, string>> = LOCAL_VARS,
): Settings {
  const loaded = parseSettings({ ...base, ...overrides });
  if (!loaded.ok) throw new Error(`invalid test settings: ${JSON.stringify(loaded.problems)}`);
  return loaded.settings;
}
