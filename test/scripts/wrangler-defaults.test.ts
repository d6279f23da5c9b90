/**
 * wrangler.toml sets each variable to the default of the settings table
 * (worker/config/table.ts), at the top level and in `[env.production]`, so the defaults
 * are written once in the code and the committed configuration cannot drift from them.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { SETTING_NAMES, SETTINGS, type SettingName } from '../../worker/config.ts';

const CONFIG = join(import.meta.dirname, '..', '..', 'wrangler.toml');

// Refused outside local mode, so wrangler.toml leaves them out on purpose (.dev.vars sets them).
const DEVELOPMENT_SWITCHES: readonly SettingName[] = [
  'ALLOW_UNSIGNED_WEBHOOKS',
  'ALLOW_LOCAL_SUBSCRIBERS',
];

function varsOf(env: string | undefined): Record<string, unknown> {
  const config = unstable_readConfig({ config: CONFIG, ...(env === undefined ? {} : { env }) }, {});
  return config.vars as Record<string, unknown>;
}

describe('wrangler.toml', () => {
  describe.each([
    ['the top level [vars]', undefined],
    ['[env.production.vars]', 'production'],
  ])('%s', (_where, env) => {
    const vars = varsOf(env);

    it('should set each variable with a default to the table default', () => {
      for (const name of SETTING_NAMES) {
        const { kind, unset } = SETTINGS[name];
        if (kind === 'var' && 'default' in unset && !DEVELOPMENT_SWITCHES.includes(name)) {
          expect({ [name]: vars[name] }).toEqual({ [name]: unset.default });
        }
      }
    });

    it('should set the required variables and nothing the table does not read as a variable', () => {
      const expected = SETTING_NAMES.filter(
        (name) => SETTINGS[name].kind === 'var' && !DEVELOPMENT_SWITCHES.includes(name),
      );
      expect(Object.keys(vars).sort()).toEqual([...expected].sort());
      for (const name of SETTING_NAMES) {
        if ('required' in SETTINGS[name].unset && SETTINGS[name].kind === 'var') {
          expect(vars[name], name).toMatch(/\S/);
        }
      }
    });
  });
});
