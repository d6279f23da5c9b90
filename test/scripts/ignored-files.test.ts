/**
 * What git leaves out of the repository: the tarball `npm pack` writes at the root (the
 * README's install steps make one) is a build product, never to be committed.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };

const root = join(import.meta.dirname, '..', '..');

/** Whether git ignores `path` (relative to the repository), by `git check-ignore`. */
function ignored(path: string): boolean {
  const run = spawnSync('git', ['check-ignore', '--quiet', '--no-index', path], { cwd: root });
  return run.status === 0;
}

describe('git ignores', () => {
  it("should ignore npm pack's tarball, whatever the version", () => {
    expect(ignored(`${packageJson.name}-${packageJson.version}.tgz`)).toBe(true);
    expect(ignored(`${packageJson.name}-9.9.9.tgz`)).toBe(true);
  });

  it('should still track the sources and documents', () => {
    expect(ignored('README.md')).toBe(false);
    expect(ignored('lib/index.ts')).toBe(false);
  });
});
