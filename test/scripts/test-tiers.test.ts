/**
 * The test tiers (test/projects.ts) lose no check: every test file in the repository belongs to
 * exactly one project, every project to the full tier, the full tier runs everything the quick
 * one runs, vitest.config.ts builds exactly these projects, and the npm scripts and CI call the
 * runner with the right tier. A single file runs alone, in seconds, without the static checks.
 */
import { spawnSync } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECTS, type ProjectFiles, type ProjectName, TIERS } from '../projects.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** Folders that hold no test of ours: dependencies, builds, local state. */
const NOT_OURS = ['node_modules', 'dist', '.wrangler', '.git'];

/** Every test file of the repository, by its path from the root. */
function testFiles(): string[] {
  return globSync('**/*.{test,spec}.{ts,mts,cts,js,mjs,tsx}', {
    cwd: ROOT,
    exclude: (path: string) => NOT_OURS.includes(basename(path)),
  }).sort();
}

/** The files a project's globs select. */
function filesOf(project: ProjectFiles): Set<string> {
  const excluded = new Set(
    project.exclude?.flatMap((pattern) => globSync(pattern, { cwd: ROOT })) ?? [],
  );
  return new Set(
    project.include
      .flatMap((pattern) => globSync(pattern, { cwd: ROOT }))
      .filter((file) => !excluded.has(file)),
  );
}

const names = Object.keys(PROJECTS) as ProjectName[];

describe('the test tiers', () => {
  it('should put every test file in exactly one project', () => {
    const owners = new Map<string, ProjectName[]>();
    for (const name of names) {
      for (const file of filesOf(PROJECTS[name]))
        owners.set(file, [...(owners.get(file) ?? []), name]);
    }
    const files = testFiles();
    expect(files.length).toBeGreaterThan(200);
    const orphans = files.filter((file) => owners.get(file) === undefined);
    const shared = files.filter((file) => (owners.get(file)?.length ?? 0) > 1);
    expect({ orphans, shared }).toEqual({ orphans: [], shared: [] });
  });

  it('should give every project files, and run every project in the full tier', () => {
    for (const name of names)
      expect({ [name]: filesOf(PROJECTS[name]).size > 0 }).toEqual({ [name]: true });
    expect([...TIERS.all.projects].sort()).toEqual([...names].sort());
  });

  it('should run in the full tier every project, every check and at least the cases of the quick tier', () => {
    const all: readonly string[] = TIERS.all.projects;
    const allChecks: readonly string[] = TIERS.all.checks;
    expect(TIERS.quick.projects.filter((name) => !all.includes(name))).toEqual([]);
    expect(TIERS.quick.checks.filter((check) => !allChecks.includes(check))).toEqual([]);
    expect(TIERS.all.fuzzRuns).toBeGreaterThanOrEqual(TIERS.quick.fuzzRuns);
    expect(TIERS.all.fuzzRuns).toBe(10_000);
  });

  it('should have vitest.config.ts build exactly these projects from the table', async () => {
    const { default: config } = await import('../../vitest.config.ts');
    const projects = (config.test?.projects ?? []) as Array<{
      test: { name: string; include: string[] };
    }>;
    const built = Object.fromEntries(projects.map(({ test }) => [test.name, test.include]));
    expect(built).toEqual(
      Object.fromEntries(names.map((name) => [name, [...PROJECTS[name].include]])),
    );
  });

  it('should wire npm test to the quick tier, npm run test:all to the full one, and CI to test:all', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.test).toBe('node scripts/test.ts');
    expect(scripts['test:all']).toBe('node scripts/test.ts --all');
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n');
    expect(ci.filter((line) => line.startsWith('npm '))).toEqual(['npm ci', 'npm run test:all']);
  });

  it('should run one file alone, without the static checks', () => {
    const run = spawnSync('node', ['scripts/test.ts', 'test/lib/money.test.ts'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/✓ \|lib\| test\/lib\/money\.test\.ts \(\d+ tests\)/);
    expect(run.stdout).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(run.stdout).toContain('test: time by step\n  vitest test/lib/money.test.ts');
    expect(run.stdout).not.toMatch(/^\s+(biome|typecheck|knip|publint|attw)\s/m);
  });
});
