import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS, listEndpoints } from '../../lib/index.ts';
import { ENDPOINTS_DOC_PATH, renderEndpointsDoc } from '../../scripts/endpoints-doc.ts';

describe('docs/endpoints.md', () => {
  it('should be the page the endpoint table generates (run npm run docs:endpoints)', () => {
    const committed = readFileSync(new URL(`../../${ENDPOINTS_DOC_PATH}`, import.meta.url), 'utf8');
    expect(committed).toBe(renderEndpointsDoc());
  });

  it('should list every endpoint of the table once', () => {
    const page = renderEndpointsDoc();
    for (const { name, method, path } of listEndpoints()) {
      expect(page.split(`| \`${name}\` | \`${method} ${path}\` |`)).toHaveLength(2);
    }
    expect(listEndpoints()).toHaveLength(Object.keys(ENDPOINTS).length);
  });
});
