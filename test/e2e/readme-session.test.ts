import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilClosed } from '../support/child-process.ts';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';

// Runs the README's curl session, exactly as written, and `npm run smoke`
// (scripts/smoke.ts) against `npm start`'s stack (scripts/start.ts) on its own ports,
// with the committed local defaults.
const root = join(import.meta.dirname, '..', '..');
const GATEWAY_PORT = 18787;
const SANDBOX_PORT = 18788;
const RECEIVER_PORT = 18789;
/** The caller and admin tokens of `.dev.vars.example`. */
const CALLER_TOKEN = 'dev-gateway-token';
const ADMIN_TOKEN = 'dev-admin-token';

function readmeSession(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- session:start -->\n```sh\n([\s\S]*?)```\n<!-- session:end -->/.exec(readme);
  if (block?.[1] === undefined) throw new Error('README has no session block');
  return block[1]
    .replace('GW=http://127.0.0.1:8787', `GW=http://127.0.0.1:${GATEWAY_PORT}`)
    .replace('SB=http://127.0.0.1:8788', `SB=http://127.0.0.1:${SANDBOX_PORT}`);
}

// One stack for the whole file: e2e files may run in parallel, and a second `npm start` on
// these ports would fail. Every describe below uses it.
let stack: NpmStartStack | undefined;
/** Everything the stack printed (stdout and stderr), kept after the banner too. */
const output = () => stack?.output() ?? '';

beforeAll(async () => {
  stack = await startNpmStart({
    gateway: GATEWAY_PORT,
    sandbox: SANDBOX_PORT,
    receiver: RECEIVER_PORT,
  });
}, 100_000);

afterAll(async () => {
  await stack?.stop();
});

describe('README curl session', () => {
  it('should move sandbox money through the gateway as the README shows', async () => {
    const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', readmeSession()], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.split('\n');
    const bodies = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const [payment, verified, before, transfer, processing, after, settled, refused, anonymous] =
      bodies;

    expect(payment.status).toBe('success');
    expect(payment.authorization_url).toBe(
      `http://127.0.0.1:${SANDBOX_PORT}/checkout/${payment.reference}`,
    );
    // The customer pays the amount plus the fee (1.5% + 100 NGN, customer-borne by default).
    expect(lines).toContain('Pay NGN 25475.00');
    expect(lines).toContain(
      `checkout answered 303, back to https://shop.example/thanks?reference=${payment.reference}`,
    );
    expect(verified.data.status).toBe('success');
    expect(verified.data.amount).toBe(25000);
    expect(before.balance).toBe(1_025_000);

    expect(transfer.data.status).toBe('processing');
    expect(processing.data.transfer_status).toBe('processing');
    const fee = processing.data.fee;
    expect(fee).toBeGreaterThan(0);
    // Balances in minor units, so the check itself never sums floats.
    const minor = (amount: number) => Math.round(amount * 100);
    expect(minor(before.balance) - minor(after.balance)).toBe(minor(5000) + minor(fee));
    expect(settled.data.transfer_status).toBe('success');

    expect(refused).toMatchObject({
      status: 'error',
      code: 'insufficient_funds',
      message: 'Insufficient funds',
    });
    expect(lines).toContain('HTTP 409');
    expect(anonymous).toMatchObject({ status: 'error', code: 'unauthorized' });
    expect(lines).toContain('HTTP 401');

    // The payment's charge_success went sandbox -> /webhooks -> queue -> the example
    // receiver, which verified its Standard Webhooks signature and printed it.
    expect(output()).toContain(`receiver listening on http://127.0.0.1:${RECEIVER_PORT}/`);
    const delivered = new RegExp(
      `receiver: verified charge_success \\S+ reference=${payment.reference}\\n`,
    );
    const deadline = Date.now() + 10_000;
    while (!delivered.test(output()) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(output()).toMatch(delivered);
    expect(output()).not.toContain('receiver: rejected');
  }, 90_000);
});

interface SmokeRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs scripts/smoke.ts as a child process, killed if it outlives `timeoutMs`. */
async function runSmoke(args: string[], timeoutMs = 60_000): Promise<SmokeRun> {
  const child = spawn(process.execPath, [join(root, 'scripts', 'smoke.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { status, stdout, stderr, timedOut } = await untilClosed(child, timeoutMs, 'SIGKILL');
  if (timedOut) throw new Error(`smoke did not finish within ${timeoutMs} ms:\n${stdout}${stderr}`);
  return { status, stdout, stderr };
}

/** The step lines of a smoke run's report, by step name: `[outcome, rest of the line]`. */
function stepLines(stdout: string): Map<string, [string, string]> {
  const steps = new Map<string, [string, string]>();
  for (const text of stdout.split('\n')) {
    const match = /^(ok|FAIL|skipped) +(\S+) +(.*)$/.exec(text);
    if (match?.[1] !== undefined && match[2] !== undefined && match[3] !== undefined) {
      steps.set(match[2], [match[1], match[3]]);
    }
  }
  return steps;
}

describe('smoke script', () => {
  const gateway = `http://127.0.0.1:${GATEWAY_PORT}`;

  it('should pass every step against npm start with both tokens and --allow-write', async () => {
    const run = await runSmoke([
      '--gateway',
      gateway,
      '--token',
      CALLER_TOKEN,
      '--admin-token',
      ADMIN_TOKEN,
      '--allow-write',
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const steps = stepLines(run.stdout);
    expect([...steps.keys()]).toEqual([
      'healthz',
      'banks',
      'idempotency-replay',
      'admin-api',
      'auth-required',
    ]);
    for (const [outcome, rest] of steps.values()) {
      expect(outcome).toBe('ok');
      expect(rest).toMatch(/^\d+ ms$/);
    }
    expect(run.stdout).toContain('smoke: 5 ok, 0 failed, 0 skipped');
    expect(run.stdout).not.toContain(CALLER_TOKEN);
    expect(run.stdout).not.toContain(ADMIN_TOKEN);
  });

  it('should skip the write and admin steps when not asked for them', async () => {
    const run = await runSmoke(['--gateway', gateway, '--token', CALLER_TOKEN]);
    expect(run.status).toBe(0);
    const steps = stepLines(run.stdout);
    expect(steps.get('idempotency-replay')).toEqual([
      'skipped',
      '-  (pass --allow-write against a sandbox upstream)',
    ]);
    expect(steps.get('admin-api')).toEqual(['skipped', '-  (pass --admin-token to check it)']);
    expect(steps.get('banks')?.[0]).toBe('ok');
    expect(run.stdout).toContain('smoke: 3 ok, 0 failed, 2 skipped');
  });

  it('should exit 1 with a FAIL line naming the step when the caller token is wrong', async () => {
    const wrongToken = 'not-a-caller-token';
    const run = await runSmoke(['--gateway', gateway, '--token', wrongToken, '--allow-write']);
    expect(run.status).toBe(1);
    const steps = stepLines(run.stdout);
    expect(steps.get('healthz')?.[0]).toBe('ok');
    expect(steps.get('banks')?.[0]).toBe('FAIL');
    expect(steps.get('banks')?.[1]).toMatch(/^\d+ ms {2}expected 200, got 401 unauthorized: \S/);
    expect(steps.get('idempotency-replay')?.[1]).toMatch(/expected 2xx, got 401 unauthorized/);
    // The gateway is still closed to callers without a token.
    expect(steps.get('auth-required')?.[0]).toBe('ok');
    expect(run.stdout).toContain('smoke: 2 ok, 2 failed, 1 skipped');
    expect(run.stdout).not.toContain(wrongToken);
  });

  it('should print the usage and exit 0 with --help', async () => {
    const run = await runSmoke(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: npm run smoke -- --gateway <url> --token <caller token>');
    expect(run.stdout).toContain('--allow-write');
  });

  it('should exit 2 naming --gateway when it is missing', async () => {
    const run = await runSmoke(['--token', CALLER_TOKEN]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^smoke: --gateway is required\n\nUsage:/);
    expect(run.stderr).not.toContain(CALLER_TOKEN);
  });

  it('should exit 2 when --timeout-ms is not a positive integer', async () => {
    const run = await runSmoke([
      '--gateway',
      gateway,
      '--token',
      CALLER_TOKEN,
      '--timeout-ms',
      '0',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--timeout-ms must be a positive integer, got "0"');
  });
});
