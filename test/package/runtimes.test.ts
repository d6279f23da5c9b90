import { describe, expect, inject, it } from 'vitest';
import { run } from '../support/package-consumer.ts';
import { expectWalk } from './expect-walk.ts';

// The installed package (not the sources) under Bun and Deno, and under the test runners
// an application would use: vitest, and Jest in its ESM mode.
describe('package under other runtimes', () => {
  const consumer = inject('consumerDir');

  it('should walk under Bun', () => {
    const result = run('bun', ['run.ts'], consumer);
    expectWalk(result);
  });

  it('should walk under Deno, importing from node_modules', () => {
    const result = run(
      'deno',
      ['run', '--no-lock', '--node-modules-dir=manual', 'run.ts'],
      consumer,
    );
    expectWalk(result);
  });

  it("should type-check under Deno's TypeScript", () => {
    const result = run(
      'deno',
      ['check', '--no-lock', '--node-modules-dir=manual', 'run.ts'],
      consumer,
    );
    expect(result.stdout + result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
  });
});

describe('package under test runners', () => {
  const consumer = inject('consumerDir');

  it('should walk in a vitest test', () => {
    const result = run('vitest', ['run', '--root', '.'], consumer);
    expect(result.stdout).toMatch(/Tests\s+1 passed/);
    expect(result.status).toBe(0);
  });

  it('should walk in a Jest test run as ESM', () => {
    const result = run('jest', ['--rootDir', '.', '--config', 'jest.config.json'], consumer, {
      NODE_OPTIONS: '--experimental-vm-modules',
    });
    expect(result.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(result.status).toBe(0);
  });
});
