import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PaymentsClient } from '../../lib/index.ts';
import { inProcessTarget, smokeWalk } from '../shared/smoke-walk.ts';
import { startSandboxClient } from '../support/sandbox-client.ts';

// The shared smoke walk (test/shared/smoke-walk.ts) under every runtime the SDK promises.
// workerd runs it in test/worker/runtime-smoke.test.ts.
const root = join(import.meta.dirname, '..', '..');
const entry = join(root, 'test', 'runtimes', 'smoke-entry.ts');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const STEPS = ['payment', 'transfer', 'refund', 'mandate'];

function runEntry(command: string, args: string[]) {
  const run = spawnSync(command, [...args, entry], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('SDK runtimes', () => {
  it('should walk under Node 22 in process', async () => {
    expect(process.versions.node.split('.')[0]).toBe('22');
    expect(await smokeWalk(inProcessTarget())).toEqual(STEPS);
  });

  it('should walk under Node 22 against the sandbox over HTTP', async () => {
    const sandbox = await startSandboxClient();
    try {
      const client = new PaymentsClient({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        baseUrl: sandbox.url,
      });
      const control = async (path: string, body: unknown = {}) =>
        (await sandbox.control(path, body)).body;
      expect(await smokeWalk({ client, control })).toEqual(STEPS);
    } finally {
      await sandbox.close();
    }
  });

  it('should walk under Deno 2', () => {
    const version = spawnSync(bin('deno'), ['--version'], { encoding: 'utf8' }).stdout;
    expect(version).toMatch(/^deno 2\./);
    expect(runEntry(bin('deno'), ['run', '--no-lock', '--allow-env', '--allow-read'])).toEqual({
      ok: true,
      steps: STEPS,
    });
  });

  it('should walk under Bun 1', () => {
    const version = spawnSync(bin('bun'), ['--version'], { encoding: 'utf8' }).stdout;
    expect(version).toMatch(/^1\./);
    expect(runEntry(bin('bun'), [])).toEqual({ ok: true, steps: STEPS });
  });
});
