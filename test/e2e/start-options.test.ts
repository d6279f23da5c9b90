import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/gateway-dev.ts';
import { untilClosed } from '../support/child-process.ts';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';

// `npm start`'s options move the stack off 8787-8789 (wrangler's default port among them),
// over the `EDGEPAY_*_PORT` variables; a bad value or a taken port ends it with a message
// that names the option. Ports of its own: the stack listens on 18837-18839, and 18847-18849
// are the variables' ports (which must stay unused when options are given) and the ports
// the failure cases take; 18927-18929 and 18937-18939 are two stacks started together;
// 18967-18969 a stack restarted on its own state.
const OPTION_PORTS = { gateway: 18837, sandbox: 18838, receiver: 18839 };
const VARIABLE_PORTS = { gateway: 18847, sandbox: 18848, receiver: 18849 };
/** wrangler dev's devtools inspector port when none is given. */
const WRANGLER_INSPECTOR_PORT = 9229;
/** The ports of two stacks started at the same moment. */
const TWIN_PORTS = [
  { gateway: 18927, sandbox: 18928, receiver: 18929 },
  { gateway: 18937, sandbox: 18938, receiver: 18939 },
];
/** The ports of a stack started twice on the same local state. */
const RESTART_PORTS = { gateway: 18967, sandbox: 18968, receiver: 18969 };
/** The variables naming {@link VARIABLE_PORTS}. */
const PORT_VARIABLES = {
  EDGEPAY_GATEWAY_PORT: String(VARIABLE_PORTS.gateway),
  EDGEPAY_SANDBOX_PORT: String(VARIABLE_PORTS.sandbox),
  EDGEPAY_RECEIVER_PORT: String(VARIABLE_PORTS.receiver),
};
/**
 * How long a run that should end at once may take before it is stopped: loading wrangler's
 * configuration reader alone takes seconds on a machine busy with other stacks.
 */
const EXIT_WAIT_MS = 60_000;
/** The timeout of a test that runs `npm start` until it exits. */
const RUN_TEST_MS = EXIT_WAIT_MS + 10_000;
/** How long the whole stack may take to start (wrangler dev's first start included). */
const READY_MS = 150_000;

const state = mkdtempSync(join(tmpdir(), 'edgepay-start-options-'));
let stack: NpmStartStack | undefined;

afterAll(async () => {
  await stack?.stop();
  rmSync(state, { recursive: true, force: true });
}, 30_000);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node scripts/start.ts` with `args` until it exits; stopped (SIGTERM) after
 * {@link EXIT_WAIT_MS} if it keeps running, which is then a failure of the test. The port
 * variables name {@link VARIABLE_PORTS}, so a run never meets a developer's own stack.
 */
async function runStart(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start.ts'), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...PORT_VARIABLES,
      EDGEPAY_VARS_FILE: join(ROOT, '.dev.vars.example'),
      EDGEPAY_PERSIST_TO: state,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { status, stdout, stderr } = await untilClosed(child, EXIT_WAIT_MS);
  return { code: status, stdout, stderr };
}

/** Listens on `port` (127.0.0.1) so that `npm start` finds it taken. */
async function takePort(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/`).then(
    () => true,
    () => false,
  );
}

describe('npm start', () => {
  describe('--help', () => {
    it(
      'should list the port options with their variables and defaults, and start nothing',
      async () => {
        const run = await runStart(['--help']);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(
          /--port <n> +the gateway's port \(default: 8787; or EDGEPAY_GATEWAY_PORT\)/,
        );
        expect(run.stdout).toMatch(
          /--sandbox-port <n> +.*\(default: 8788; or EDGEPAY_SANDBOX_PORT\)/,
        );
        expect(run.stdout).toMatch(
          /--receiver-port <n> +.*\(default: 8789; or EDGEPAY_RECEIVER_PORT\)/,
        );
        expect(run.stdout).toContain('An option wins over its variable.');
        expect(await listening(VARIABLE_PORTS.sandbox)).toBe(false);
      },
      RUN_TEST_MS,
    );
  });

  describe('bad values', () => {
    it.each([
      [
        ['--sandbox-port', '80a'],
        {},
        '--sandbox-port must be a port, a whole number from 1 to 65535 (got "80a")',
      ],
      [
        ['--port', '70000'],
        {},
        '--port must be a port, a whole number from 1 to 65535 (got "70000")',
      ],
      [
        [],
        { EDGEPAY_RECEIVER_PORT: 'abc' },
        'EDGEPAY_RECEIVER_PORT must be a port, a whole number from 1 to 65535 (got "abc")',
      ],
      [
        ['--port', '18837', '--receiver-port', '18837'],
        {},
        'the gateway and the receiver cannot both use port 18837',
      ],
      [['--prot', '8790'], {}, "Unknown option '--prot'"],
    ])(
      'should refuse %j %j with a usage error naming it',
      async (args, env, message) => {
        const run = await runStart(args, env);
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`start: ${message}`);
        expect(run.stderr).toContain('Usage: npm start -- [options]');
        expect(run.stdout).toBe('');
      },
      RUN_TEST_MS,
    );
  });

  describe('a taken port', () => {
    it.each([
      ['gateway', VARIABLE_PORTS.gateway, '--port', 'EDGEPAY_GATEWAY_PORT'],
      ['sandbox', VARIABLE_PORTS.sandbox, '--sandbox-port', 'EDGEPAY_SANDBOX_PORT'],
      ['receiver', VARIABLE_PORTS.receiver, '--receiver-port', 'EDGEPAY_RECEIVER_PORT'],
    ])(
      "should exit non-zero naming the %s's port %i, the option and the variable, leaving nothing running",
      async (role, port, option, variable) => {
        const taken = await takePort(port);
        try {
          const run = await runStart([
            '--port',
            String(VARIABLE_PORTS.gateway),
            '--sandbox-port',
            String(VARIABLE_PORTS.sandbox),
            '--receiver-port',
            String(VARIABLE_PORTS.receiver),
          ]);
          expect(run.code, `${run.stdout}${run.stderr}`).toBe(1);
          expect(run.stderr).toContain(
            `start: port ${port} on 127.0.0.1 is taken, and the ${role} needs it. ` +
              `Stop what listens there, or choose another port: npm start -- ${option} <n> (or ${variable}=<n>)`,
          );
          expect(run.stdout).not.toContain('edgepay is running');
        } finally {
          await new Promise((resolve) => taken.close(resolve));
        }
        const others = Object.values(VARIABLE_PORTS).filter((other) => other !== port);
        expect(await Promise.all(others.map(listening))).toEqual([false, false]);
      },
      RUN_TEST_MS,
    );
  });

  describe('--port, --sandbox-port, --receiver-port', () => {
    it(
      'should run the stack on the ports the options give, over the variables',
      async () => {
        stack = await startNpmStart(OPTION_PORTS, READY_MS, {
          portsAs: 'options',
          env: PORT_VARIABLES,
        });
        const health = await fetch(`http://127.0.0.1:${OPTION_PORTS.gateway}/healthz`);
        expect(health.status).toBe(200);
        // The gateway reaches the sandbox on its port: an answer of the upstream through it.
        const banks = await fetch(`http://127.0.0.1:${OPTION_PORTS.gateway}/banks`, {
          headers: { Authorization: 'Bearer dev-gateway-token' },
        });
        expect(banks.status).toBe(200);
        expect(stack.output()).toContain(`gateway   http://127.0.0.1:${OPTION_PORTS.gateway}`);
        expect(stack.output()).toContain(`sandbox   http://127.0.0.1:${OPTION_PORTS.sandbox}`);
        expect(stack.output()).toContain(`receiver  http://127.0.0.1:${OPTION_PORTS.receiver}/`);
        // Quiet by default: no bindings tables, no stack trace for a machine without internet.
        expect(stack.output()).not.toContain('Your Worker has access to the following bindings');
        expect(stack.output()).not.toMatch(/getaddrinfo|^\s+at /m);
        expect(stack.output()).not.toContain('Scheduled Workers are not automatically triggered');
        // The banner's example carries the real token, not a placeholder.
        expect(stack.output()).toContain(
          `Try: curl -s http://127.0.0.1:${OPTION_PORTS.gateway}/banks -H 'Authorization: Bearer dev-gateway-token'`,
        );
        const variablePorts = Object.values(VARIABLE_PORTS);
        expect(await Promise.all(variablePorts.map(listening))).toEqual([false, false, false]);
      },
      READY_MS + 10_000,
    );
  });

  describe('a restart on the same local state', () => {
    it(
      "should keep the example subscription's secret: nothing rotated it",
      async () => {
        const restartState = mkdtempSync(join(tmpdir(), 'edgepay-restart-'));
        const receiverSubscription = async () => {
          const res = await fetch(`http://127.0.0.1:${RESTART_PORTS.gateway}/admin/subscriptions`, {
            headers: { Authorization: 'Bearer dev-admin-token' },
          });
          const { data } = (await res.json()) as {
            data: { id: string; description: string | null; previous_secret_expires_at: unknown }[];
          };
          return data.find((subscription) => subscription.description?.includes('npm start'));
        };
        try {
          const first = await startNpmStart(RESTART_PORTS, READY_MS, { persistTo: restartState });
          const before = await receiverSubscription();
          expect(before?.previous_secret_expires_at).toBeNull();
          // Stopped as a terminal's Ctrl-C stops it: cleanly, without a crash of the runtime.
          expect(await first.interrupt()).toBe(0);
          expect(first.output()).not.toMatch(/crashed/i);
          const second = await startNpmStart(RESTART_PORTS, READY_MS, {
            persistTo: restartState,
          });
          try {
            const after = await receiverSubscription();
            expect(after?.id).toBe(before?.id);
            // A rotation would have left the old secret in use for a day.
            expect(after?.previous_secret_expires_at).toBeNull();
          } finally {
            await second.stop();
          }
        } finally {
          rmSync(restartState, { recursive: true, force: true });
        }
      },
      2 * READY_MS + 30_000,
    );
  });

  describe('two stacks at once', () => {
    it(
      'should start both, each on its own ports, nothing of one in the way of the other',
      async () => {
        // Nothing but the ports may be fixed: a second fixed port (wrangler's devtools
        // inspector, 9229) is found free by both starts and taken by only one.
        const devtoolsTakenBefore = await listening(WRANGLER_INSPECTOR_PORT);
        const starts = await Promise.allSettled(
          TWIN_PORTS.map((ports) => startNpmStart(ports, READY_MS)),
        );
        const started = starts.flatMap((start) =>
          start.status === 'fulfilled' ? [start.value] : [],
        );
        try {
          expect(starts.filter((start) => start.status === 'rejected')).toEqual([]);
          for (const ports of TWIN_PORTS) {
            const health = await fetch(`http://127.0.0.1:${ports.gateway}/healthz`);
            expect(health.status).toBe(200);
          }
          expect(await listening(WRANGLER_INSPECTOR_PORT)).toBe(devtoolsTakenBefore);
        } finally {
          await Promise.all(started.map((twin) => twin.stop()));
        }
      },
      READY_MS + 30_000,
    );
  });
});
