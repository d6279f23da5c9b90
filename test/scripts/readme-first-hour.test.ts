/**
 * What a new user meets first in the README: the prerequisites before any command (the Node
 * version the package declares, the one that runs `.mts` directly, and the project's own Node
 * for contributors), snippets that say which ports they assume, and routes listed with the
 * token they take.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

/** The README's section under `## title`, up to the next `## `. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  expect(start, `README has no "## ${title}"`).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

describe('README, the first hour', () => {
  it('should open with the prerequisites, before any command', () => {
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map(([, title]) => title);
    expect(headings[0]).toBe('Prerequisites');
    expect(readme.indexOf('## Prerequisites')).toBeLessThan(readme.indexOf('```'));
    const prerequisites = section('Prerequisites');
    // The version the package declares, and the one that strips types from .mts files.
    const declared = packageJson.engines.node.replace('>=', '');
    expect(prerequisites).toContain(`Node.js ${declared} or later`);
    expect(prerequisites).toContain('Node 22.18');
    expect(prerequisites).toContain('ERR_UNKNOWN_FILE_EXTENSION');
    // Contributors: the project's own Node, and how to reach it from a shell.
    expect(prerequisites).toContain('node_modules/.bin');
  });

  it('should say which ports the SDK snippet assumes', () => {
    const sdk = section('The SDK in short');
    const intro = sdk.slice(0, sdk.indexOf('```'));
    for (const port of ['8787', '8788']) {
      if (sdk.includes(`127.0.0.1:${port}`)) expect(intro).toContain(port);
    }
  });

  it('should say the token GET /openapi.json takes', () => {
    const line = readme.slice(readme.indexOf('`GET /openapi.json`'));
    expect(line.slice(0, line.indexOf('\n- '))).toMatch(/Bearer <token>.*401 without/s);
  });
});
