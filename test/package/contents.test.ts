import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ROOT } from '../support/package-consumer.ts';

// What the tarball holds and what its package.json promises, as installed.
describe('package tarball', () => {
  const tarball = inject('tarball');
  const installed = join(inject('consumerDir'), 'node_modules', 'edgepay');

  it('should hold only dist/, the package.json and the docs a user needs', () => {
    const docs = existsSync(join(ROOT, 'CHANGELOG.md')) ? ['CHANGELOG.md'] : [];
    const outside = tarball.files.filter((file) => !file.startsWith('dist/'));
    expect(outside.sort()).toEqual([...docs, 'LICENSE', 'README.md', 'package.json']);
    expect(tarball.files.filter((file) => file.startsWith('dist/lib/testing/'))).not.toEqual([]);
  });

  it('should ship built JavaScript with declarations and source maps for both entry points', () => {
    for (const entry of ['dist/lib/index', 'dist/lib/testing/index']) {
      for (const extension of ['.js', '.d.ts', '.js.map']) {
        expect(tarball.files).toContain(`${entry}${extension}`);
      }
    }
    expect(tarball.files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual(
      [],
    );
  });

  it('should point its exports at files that exist, types first', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest.license).toBe('MIT');
    expect(manifest.dependencies).toEqual({ valibot: '^1.5.0' });
    for (const subpath of ['.', './testing']) {
      const conditions = manifest.exports[subpath];
      expect(Object.keys(conditions)).toEqual(['types', 'import', 'default']);
      for (const target of Object.values<string>(conditions)) {
        expect(tarball.files).toContain(target.replace(/^\.\//, ''));
      }
    }
  });

  it('should keep the source maps readable without the sources', () => {
    const map = JSON.parse(readFileSync(join(installed, 'dist/lib/index.js.map'), 'utf8'));
    expect(map.sourcesContent?.[0]).toContain('export {');
  });
});
