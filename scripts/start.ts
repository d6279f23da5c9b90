// `npm start`: the main job on an embedded default (DESIGN 5). Brings up, with nothing
// deployed: the sandbox emulator on 127.0.0.1:8788 and the gateway (wrangler dev, local
// D1 and KV, migrations applied) on 127.0.0.1:8787 in front of it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandboxServer } from './sandbox-server.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const GATEWAY_PORT = 8787;
const SANDBOX_PORT = 8788;
const gatewayUrl = `http://${HOST}:${GATEWAY_PORT}`;
const sandboxUrl = `http://${HOST}:${SANDBOX_PORT}`;
const wrangler = join(root, 'node_modules', '.bin', 'wrangler');
// No prompts, no telemetry, no update checks: the machine may have no network.
const quietEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  NO_UPDATE_NOTIFIER: '1',
  CI: process.env.CI ?? 'true',
};

function ensureDevVars(): void {
  const devVars = join(root, '.dev.vars');
  if (existsSync(devVars)) return;
  copyFileSync(join(root, '.dev.vars.example'), devVars);
  console.log('start: created .dev.vars from .dev.vars.example');
}

function applyMigrations(): void {
  const result = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local'], {
    cwd: root,
    env: quietEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    console.error(result.stdout, result.stderr);
    throw new Error(`wrangler d1 migrations apply failed with status ${result.status}`);
  }
  console.log('start: D1 migrations applied (local)');
}

async function waitForGateway(child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${gatewayUrl}/healthz`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the gateway did not answer ${gatewayUrl}/healthz within ${timeoutMs} ms`);
}

function banner(): string {
  return `
edgepay is running (sandbox money only)

  gateway   ${gatewayUrl}     Authorization: Bearer dev-gateway-token
  admin     ${gatewayUrl}/admin   Authorization: Bearer dev-admin-token
  sandbox   ${sandboxUrl}     key id sandbox-key, secret sandbox-secret
            opening balance 1,000,000.00 NGN; controls under ${sandboxUrl}/__sandbox/
  webhooks  sandbox -> ${gatewayUrl}/webhooks (signed with the merchant secret)

  Try: curl -s ${gatewayUrl}/banks -H 'Authorization: Bearer dev-gateway-token'
  The README has the whole curl session. Ctrl-C stops everything.
`;
}

async function main(): Promise<void> {
  ensureDevVars();
  applyMigrations();
  const sandbox = await startSandboxServer({
    port: SANDBOX_PORT,
    host: HOST,
    publicBaseUrl: sandboxUrl,
    webhookUrl: `${gatewayUrl}/webhooks`,
  });
  console.log(`start: sandbox listening on ${sandbox.url}`);
  const gateway = spawn(
    wrangler,
    ['dev', '--ip', HOST, '--port', String(GATEWAY_PORT), '--var', `UPSTREAM_BASE_URL:${sandboxUrl}`],
    { cwd: root, env: quietEnv, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  let stopping = false;
  const stop = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    gateway.kill('SIGTERM');
    await sandbox.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  gateway.on('exit', (code) => {
    if (!stopping) {
      console.error(`start: wrangler dev exited (${code}); stopping`);
      void stop(code ?? 1);
    }
  });
  await waitForGateway(gateway, 60_000);
  console.log(banner());
}

main().catch((error: unknown) => {
  console.error('start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
