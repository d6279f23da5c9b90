/**
 * `edgepay sandbox` (cli/edgepay.ts) as a user runs it: a child process on a free
 * loopback port, reached over real HTTP, stopped with a signal.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PaymentsClient } from '../../lib/index.ts';
import { verifyRequestSignature } from '../../lib/signing.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { type CliRuntime, type RunningCli, runCli, startCli } from '../support/cli-process.ts';
import { type Json, uniqueRef } from '../support/sandbox-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const running: RunningCli[] = [];
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop('SIGKILL')));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function sandbox(args: string[] = [], runtime: CliRuntime = 'node'): Promise<RunningCli> {
  const cli = await startCli(['--port', '0', ...args], runtime);
  running.push(cli);
  return cli;
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: Json }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json() };
}

function client(url: string, keyId: string, secret: string): PaymentsClient {
  return new PaymentsClient({ baseUrl: url, keyId, secret, maxRetries: 0 });
}

function initializePayment(sdk: PaymentsClient, reference = uniqueRef('cli')) {
  return sdk.payments.initialize({
    email: 'ada@example.com',
    amount: '2500.00',
    currency: 'NGN',
    reference,
  });
}

/** Whether anything accepts connections at `url` any more. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/banks`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe('edgepay CLI', () => {
  describe('sign', () => {
    const BODY = JSON.stringify({
      email: 'ada@example.com',
      amount: '2500.00',
      currency: 'NGN',
      reference: uniqueRef('sign'),
    });

    /** The `Name: value` lines `edgepay sign` printed, as headers. */
    function headersOf(stdout: string): Record<string, string> {
      return Object.fromEntries(
        stdout
          .trim()
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      );
    }

    it('should print headers the sandbox accepts, for a body given or piped', async () => {
      const cli = await sandbox(['--key-id', 'cli-key', '--secret', 'cli-secret-value']);
      const env = { EDGEPAY_SECRET: 'cli-secret-value', EDGEPAY_KEY_ID: 'cli-key' };
      const given = runCli(['sign', '--body', BODY], { env });
      expect(given).toMatchObject({ status: 0, stderr: '' });
      const headers = headersOf(given.stdout);
      expect(Object.keys(headers)).toEqual(['X-Key-Id', 'X-Timestamp', 'X-Signature']);
      const res = await fetch(`${cli.url}/payments/initialize`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: BODY,
      });
      expect(res.status).toBe(200);
      const piped = runCli(['sign'], { env, input: BODY });
      expect(piped.status).toBe(0);
      await verifyRequestSignature({
        secret: 'cli-secret-value',
        body: BODY,
        headers: new Headers(headersOf(piped.stdout)),
      });
      // A request without a body signs the empty one.
      const empty = headersOf(runCli(['sign', '--body', ''], { env }).stdout);
      const reference = JSON.parse(BODY).reference;
      const read = await fetch(`${cli.url}/payments/verify/${reference}`, { headers: empty });
      expect(read.status).toBe(200);
    });

    it('should read the secret from EDGEPAY_SECRET only, and say so when it is unset', () => {
      const run = runCli(['sign', '--body', BODY], { env: { EDGEPAY_SECRET: '' } });
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('EDGEPAY_SECRET is not set');
      expect(runCli(['sign', '--secret', 'x', '--body', BODY]).status).toBe(2);
    });
  });

  describe('help and version', () => {
    it.each([['--help'], ['-h']])('should print the usage for "edgepay %s" and exit 0', (flag) => {
      const run = runCli([flag]);
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/^Usage: edgepay <command> \[options\]/);
      expect(run.stdout).toContain('sandbox');
      expect(run.stderr).toBe('');
    });

    it.each([['--help'], ['-h']])(
      'should print the sandbox usage for "edgepay sandbox %s"',
      (flag) => {
        const run = runCli(['sandbox', flag]);
        expect(run.status).toBe(0);
        expect(run.stdout).toMatch(/^Usage: edgepay sandbox \[options\]/);
        for (const option of [
          '--port',
          '--host',
          '--key-id',
          '--secret',
          '--webhook-url',
          '--balance',
        ]) {
          expect(run.stdout).toContain(option);
        }
        expect(run.stdout).toContain('(default: 8788)');
        expect(run.stdout).toContain('(default: 127.0.0.1');
        expect(run.stdout).toContain('(default: sandbox-key)');
        expect(run.stdout).toContain('(default: sandbox-secret)');
        expect(run.stdout).toMatch(/major units \(NGN, not kobo\)[\s\S]*\(default: 1000000\.00\)/);
        expect(run.stderr).toBe('');
      },
    );

    it('should show the same options in docs/sandbox.md as in its --help', () => {
      const options = /\nOptions:\n[\s\S]*?\n(?=\n)/.exec(
        runCli(['sandbox', '--help']).stdout,
      )?.[0];
      expect(options).toContain('--balance <amount>');
      expect(readFileSync(join(import.meta.dirname, '../../docs/sandbox.md'), 'utf8')).toContain(
        `Usage: edgepay sandbox [options]\n${options}`,
      );
    });

    it('should print the package version for --version', () => {
      const run = runCli(['--version']);
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(`${packageJson.version}\n`);
    });
  });

  describe('usage errors', () => {
    it.each([
      ['no command', []],
      ['an unknown command', ['serve']],
      ['an unknown global option', ['--verbose']],
    ])('should print the usage to stderr and exit 2 for %s', (_, args) => {
      const run = runCli(args);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^edgepay: .+\n\nUsage: edgepay <command>/);
    });

    it('should print the sandbox usage to stderr and exit 2 for an unknown option', () => {
      const run = runCli(['sandbox', '--prot', '9000']);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain("'--prot'");
      expect(run.stderr).toContain('Usage: edgepay sandbox [options]');
    });

    it('should refuse a positional argument and an option without its value', () => {
      expect(runCli(['sandbox', 'now'])).toMatchObject({ status: 2, stdout: '' });
      const missing = runCli(['sandbox', '--port']);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain("'--port <value>' argument missing");
    });

    it.each([
      ['--port', 'abc'],
      ['--port', '65536'],
      ['--port', '-1'],
      ['--port', '80.5'],
      ['--webhook-url', 'ftp://hooks.example/in'],
      ['--webhook-url', 'not a url'],
      ['--balance', '-5'],
      ['--balance', '10.001'],
      ['--balance', '1e6'],
      ['--balance', 'lots'],
      ['--secret', ''],
      ['--key-id', ''],
      ['--host', ''],
    ])('should exit 2 naming %s for the value "%s"', (option, value) => {
      const run = runCli(['sandbox', option, value]);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^edgepay: ${option} must `));
      if (value !== '') expect(run.stderr).toContain(`(got "${value}")`);
      expect(run.stderr).toContain('Usage: edgepay sandbox [options]');
    });

    it('should exit 1 naming the address when the port is taken', async () => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const { port } = blocker.address() as { port: number };
      try {
        const run = runCli(['sandbox', '--port', String(port)]);
        expect(run.status).toBe(1);
        expect(run.stderr).toContain(`edgepay sandbox: cannot listen on 127.0.0.1:${port}`);
        expect(run.stderr).toContain('EADDRINUSE');
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
    });
  });

  describe('sandbox', () => {
    it('should print its loopback address and the default credentials, and serve the API', async () => {
      const cli = await sandbox();
      expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(cli.stdout()).toContain('key id:   sandbox-key\n');
      expect(cli.stdout()).toContain('secret:   sandbox-secret\n');
      expect(cli.stdout()).toContain('balance:  1000000.00 NGN\n');
      expect(cli.stdout()).toContain('webhooks: not sent (no --webhook-url)');
      expect(cli.stdout()).toContain('Press Ctrl-C to stop.');
      const banks = await json(`${cli.url}/banks`);
      expect(banks.status).toBe(200);
      expect(banks.body.data.length).toBeGreaterThan(0);
      const session = await initializePayment(client(cli.url, 'sandbox-key', 'sandbox-secret'));
      expect(session.authorization_url).toBe(`${cli.url}/checkout/${session.reference}`);
    });

    it('should accept the credentials given by --key-id and --secret, and only those', async () => {
      const cli = await sandbox(['--key-id', 'ci-key', '--secret', '-ci-secret-']);
      expect(cli.stdout()).toContain('key id:   ci-key\n');
      expect(cli.stdout()).toContain('secret:   -ci-secret-\n');
      const session = await initializePayment(client(cli.url, 'ci-key', '-ci-secret-'));
      expect(session.reference).toMatch(/^cli/);
      await expect(
        initializePayment(client(cli.url, 'ci-key', 'sandbox-secret')),
      ).rejects.toMatchObject({ status: 401 });
      await expect(
        initializePayment(client(cli.url, 'sandbox-key', 'sandbox-secret')),
      ).rejects.toMatchObject({ status: 401 });
    });

    it('should send signed webhooks to --webhook-url', async () => {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      const cli = await sandbox(['--webhook-url', receiver.url, '--secret', 'hook-secret']);
      expect(cli.stdout()).toContain(`webhooks: ${receiver.url}\n`);
      const sdk = client(cli.url, 'sandbox-key', 'hook-secret');
      const { reference } = await initializePayment(sdk);
      const done = await json(`${cli.url}/__sandbox/payments/${reference}/complete`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ outcome: 'success' }),
      });
      expect(done.status).toBe(200);
      // The server flushes webhooks on its own timer (every 250 ms).
      const hook = await receiver.waitFor((h) => h.body?.data?.reference === reference, {
        timeoutMs: 10_000,
      });
      expect(hook.body).toMatchObject({
        event_type: 'charge_success',
        data: { reference, amount: 2500, currency: 'NGN' },
      });
      const headers = hook.headers as Record<string, string>;
      await expect(
        verifyRequestSignature({ secret: 'hook-secret', body: hook.raw, headers }),
      ).resolves.toBeUndefined();
      await expect(
        verifyRequestSignature({ secret: 'sandbox-secret', body: hook.raw, headers }),
      ).rejects.toMatchObject({ name: 'SignatureVerificationError' });
    });

    it('should open with the --balance given in major units', async () => {
      const cli = await sandbox(['--balance', '5000.50']);
      expect(cli.stdout()).toContain('balance:  5000.50 NGN\n');
      const state = await json(`${cli.url}/__sandbox/state`);
      expect(state.body).toMatchObject({ balance: 5000.5, currency: 'NGN' });
    });

    it.each([['SIGINT'], ['SIGTERM']] as const)(
      'should stop cleanly on %s: exit 0 and the port closed',
      async (signal) => {
        const cli = await sandbox();
        expect(await answers(cli.url)).toBe(true);
        expect(await cli.stop(signal)).toBe(0);
        expect(cli.stdout()).toContain(`edgepay sandbox: ${signal}, stopping`);
        expect(cli.stderr()).toBe('');
        expect(await answers(cli.url)).toBe(false);
      },
    );
  });

  describe.each([['bun'], ['deno']] as const)('under %s', (runtime) => {
    it('should serve GET /banks and stop on SIGINT with exit 0', async () => {
      const cli = await sandbox([], runtime);
      expect(cli.stdout()).toContain('key id:   sandbox-key\n');
      const banks = await json(`${cli.url}/banks`);
      expect(banks.status).toBe(200);
      expect(banks.body.data.length).toBeGreaterThan(0);
      expect(await cli.stop('SIGINT')).toBe(0);
      expect(await answers(cli.url)).toBe(false);
    }, 30_000);
  });
});
