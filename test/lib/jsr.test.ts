import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

// The JSR package (jsr.json): Deno's own publish checks, run as `deno publish` runs them.
const root = realpathSync(join(import.meta.dirname, '..', '..'));
const deno = join(root, 'node_modules', '.bin', 'deno');
const readJson = (name: string) => JSON.parse(readFileSync(join(root, name), 'utf8'));

// Every address Deno could fetch from points at a closed port: the dry run has to resolve
// valibot from node_modules (`nodeModulesDir: "manual"`), with an empty cache.
const CLOSED = 'http://127.0.0.1:9/';

function dryRun() {
  const denoDir = mkdtempSync(join(tmpdir(), 'edgepay-deno-'));
  try {
    const run = spawnSync(deno, ['publish', '--dry-run', '--allow-dirty'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: {
        ...process.env,
        DENO_DIR: denoDir,
        DENO_NO_UPDATE_CHECK: '1',
        NO_COLOR: '1',
        NPM_CONFIG_REGISTRY: CLOSED,
        JSR_URL: CLOSED,
        HTTP_PROXY: CLOSED,
        HTTPS_PROXY: CLOSED,
      },
    });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(denoDir, { recursive: true, force: true });
  }
}

describe('jsr.json', () => {
  it('should carry the version and entry points of package.json', () => {
    const jsr = readJson('jsr.json');
    const pkg = readJson('package.json');
    expect(jsr.version).toBe(pkg.version);
    // npm gets the build of the same sources: dist/lib/x.js is lib/x.ts.
    const source = (built: string) => built.replace('./dist/', './').replace(/\.js$/, '.ts');
    expect(jsr.exports).toEqual({
      '.': source(pkg.exports['.'].default),
      './testing': source(pkg.exports['./testing'].default),
    });
    expect(jsr.imports.valibot).toBe(`npm:valibot@${pkg.dependencies.valibot}`);
  });

  describe('deno publish --dry-run', () => {
    let status: number | null = null;
    let output = '';
    let published: string[] = [];
    beforeAll(() => {
      ({ status, output } = dryRun());
      published = [...output.matchAll(/file:\/\/(\S+)/g)].map(([, path = '']) =>
        path.slice(root.length + 1),
      );
    }, 150_000);

    it('should pass offline, type-checked, with no slow types', () => {
      expect(output).toContain('Checking for slow types in the public API');
      expect(output).not.toMatch(/error\[|errors for slow types/);
      expect(status, output).toBe(0);
      expect(output).toContain('Success Dry run complete');
    });

    it('should publish the lib sources, README and LICENSE only', () => {
      expect(published).toEqual(
        expect.arrayContaining([
          'LICENSE',
          'README.md',
          'jsr.json',
          'lib/index.ts',
          'lib/testing/index.ts',
        ]),
      );
      const others = published.filter(
        (path) => !path.startsWith('lib/') && !['LICENSE', 'README.md', 'jsr.json'].includes(path),
      );
      expect(others).toEqual([]);
    });
  });
});
