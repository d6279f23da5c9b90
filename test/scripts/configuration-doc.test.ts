import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC_PATH, renderConfigurationDoc } from '../../scripts/configuration-doc.ts';
import { SETTING_NAMES, SETTINGS } from '../../worker/config.ts';

describe('docs/configuration.md', () => {
  it('should be the page the settings table generates (run npm run docs:configuration)', () => {
    const committed = readFileSync(
      new URL(`../../${CONFIGURATION_DOC_PATH}`, import.meta.url),
      'utf8',
    );
    expect(committed).toBe(renderConfigurationDoc());
  });

  it('should list every setting of the table once, with its kind', () => {
    const page = renderConfigurationDoc();
    for (const name of SETTING_NAMES) {
      expect(page.split(`| \`${name}\` | ${SETTINGS[name].kind} |`)).toHaveLength(2);
    }
  });
});
