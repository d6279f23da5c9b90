import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PaymentsClient } from '../../lib/index.ts';
import { exactlyOnceWalk } from '../shared/exactly-once-walk.ts';
import { inProcessTarget, smokeWalk } from '../shared/smoke-walk.ts';
import { startSandboxClient } from '../support/sandbox-client.ts';

// The shared smoke walk (test/shared/smoke-walk.ts) under every runtime the SDK promises.
// workerd runs it in test/worker/runtime-smoke.test.ts.
const root = join(import.meta.dirname, '..', '..');
const entry = join(root, 'test', 'runtimes', 'smoke-entry.ts');
const exactlyOnceEntry = join(root, 'test', 'runtimes', 'exactly-once-entry.ts');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const STEPS = ['payment', 'transfer', 'refund', 'mandate'];

// One POST per transfer whatever the window: the provider answered late, dropped the
// connection or answered 5xx and committed 1.5 s later, or committed at once but could
// not be read for longer than the window (the resend is refused as a duplicate).
const MISSING_SECRET = 'TypeError: `secret` is missing or empty';
const EXACTLY_ONCE = {
  timeout: { outcome: 'transfer processing 100', posts: ['200'], lookedUpBeforeCommit: true },
  dropped: {
    outcome: 'transfer processing 100',
    posts: ['dropped, committed 200'],
    lookedUpBeforeCommit: true,
  },
  serverError: {
    outcome: 'transfer processing 100',
    posts: ['503, committed 200'],
    lookedUpBeforeCommit: true,
  },
  duplicateRefused: {
    outcome: 'transfer processing 100',
    posts: ['502, committed 200', '409'],
    lookedUpBeforeCommit: true,
  },
  unreadable: {
    outcome: 'OutcomeUnknownError',
    posts: ['502, committed 200', '409'],
    lookedUpBeforeCommit: true,
  },
  failClosed: Object.fromEntries(
    ['parseWebhookEvent', 'verifyRequestSignature', 'PaymentsClient']
      .flatMap((where) => ['undefined', 'null', 'empty'].map((secret) => `${where} ${secret}`))
      .concat('parseWebhookEvent without options')
      .map((name) => [name, MISSING_SECRET]),
  ),
  unverified: 'charge_success',
};

function runEntry(command: string, args: string[], file = entry) {
  const run = spawnSync(command, [...args, file], {
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

  describe('exactly once and fail closed', () => {
    it('should send each transfer once and refuse a missing secret under Node 22', async () => {
      expect(await exactlyOnceWalk()).toEqual(EXACTLY_ONCE);
    });

    it('should send each transfer once and refuse a missing secret under Deno 2', () => {
      const args = ['run', '--no-lock', '--allow-env', '--allow-read'];
      expect(runEntry(bin('deno'), args, exactlyOnceEntry)).toEqual(EXACTLY_ONCE);
    });

    it('should send each transfer once and refuse a missing secret under Bun 1', () => {
      expect(runEntry(bin('bun'), [], exactlyOnceEntry)).toEqual(EXACTLY_ONCE);
    });
  });
});
