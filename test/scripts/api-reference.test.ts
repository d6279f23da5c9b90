/**
 * The API reference (`npm run docs`, typedoc.json): TypeDoc builds pages for `edgepay` and
 * `edgepay/testing` from the docstrings without a single warning, missing docs included
 * (`validation.notDocumented`, warnings treated as errors). The plugin that drops TypeDoc's
 * one false warning drops that one and nothing else.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Application } from 'typedoc';
import { afterAll, describe, expect, it } from 'vitest';
import { load } from '../../scripts/typedoc-plugin.ts';

const root = join(import.meta.dirname, '..', '..');
const out = mkdtempSync(join(tmpdir(), 'edgepay-api-'));

describe('API reference', () => {
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('should build both entry points from the docstrings with no warning', {
    timeout: 120_000,
  }, () => {
    const path = [dirname(process.execPath), join(root, 'node_modules', '.bin'), process.env.PATH];
    // typedoc.json as `npm run docs` reads it, written elsewhere than docs/api.
    const run = spawnSync(join(root, 'node_modules', '.bin', 'typedoc'), ['--out', out], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PATH: path.join(':'), NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    const output = run.stdout + run.stderr;
    expect(output).not.toMatch(/\[(warning|error)\]/);
    expect(run.status).toBe(0);
    const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
    expect(config.validation.notDocumented).toBe(true);
    expect(config.treatWarningsAsErrors).toBe(true);
    expect(existsSync(join(out, 'modules', 'edgepay.html'))).toBe(true);
    expect(existsSync(join(out, 'modules', 'edgepay_testing.html'))).toBe(true);
    const client = readFileSync(join(out, 'classes', 'edgepay.PaymentsClient.html'), 'utf8');
    expect(client).toContain('one resource per endpoint group');
  });

  it('should drop only a warning whose places are one place, and print every other', () => {
    const printed: string[] = [];
    const logger = {
      warn: (text: string) => printed.push(`warn ${text}`),
      info: (text: string) => printed.push(`info ${text}`),
    };
    load({ logger } as unknown as Application);
    const multiple =
      'amount has multiple declarations with a comment. An arbitrary comment will be used';
    logger.warn(multiple);
    logger.info('The comments for amount are declared at:\n\tlib/a.ts:3\n\tlib/a.ts:3');
    expect(printed).toEqual([]);
    logger.warn(multiple);
    logger.info('The comments for amount are declared at:\n\tlib/a.ts:3\n\tlib/b.ts:9');
    logger.warn('Something else');
    logger.info('html generated');
    expect(printed).toEqual([
      `warn ${multiple}`,
      'info The comments for amount are declared at:\n\tlib/a.ts:3\n\tlib/b.ts:9',
      'warn Something else',
      'info html generated',
    ]);
  });
});
