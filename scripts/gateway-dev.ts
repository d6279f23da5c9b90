// How `npm start` runs the gateway locally: `wrangler dev` in local mode in front of the
// sandbox, on local D1/KV state with its migrations applied. Shared by scripts/start.ts
// and the crash test of the local stack (test/e2e/crash.test.ts), so both run the same
// command.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The project's wrangler binary. */
export const WRANGLER = join(ROOT, 'node_modules', '.bin', 'wrangler');

/** The environment for wrangler: no prompts, telemetry or update checks (maybe no network). */
export const QUIET_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  NO_UPDATE_NOTIFIER: '1',
  CI: process.env.CI ?? 'true',
};

/** What {@link gatewayDevArgs} needs. */
export interface GatewayDevOptions {
  /** The interface, `127.0.0.1`. */
  readonly host: string;
  /** The gateway's port. */
  readonly port: number;
  /** The dotenv file with the local secrets (`.dev.vars`). */
  readonly varsFile: string;
  /** The sandbox's base URL, the gateway's upstream. */
  readonly sandboxUrl: string;
  /** The local state folder (`--persist-to`); wrangler's default `.wrangler/state` when absent. */
  readonly persistTo?: string | undefined;
  /** More `NAME:value` pairs for `--var`, after the local ones (they win). */
  readonly vars?: readonly string[];
}

/** `--persist-to <folder>` when a folder is given, else nothing. */
function persistArgs(persistTo: string | undefined): string[] {
  return persistTo === undefined ? [] : ['--persist-to', persistTo];
}

/**
 * The arguments of `wrangler dev` for the local gateway.
 *
 * @param options - address, secrets file, upstream, state folder and extra vars.
 * @returns the arguments after the wrangler binary.
 */
export function gatewayDevArgs(options: GatewayDevOptions): string[] {
  const extra = (options.vars ?? []).flatMap((pair) => ['--var', pair]);
  return [
    'dev',
    '--ip',
    options.host,
    '--port',
    String(options.port),
    '--env-file',
    options.varsFile,
    // Local mode, explicitly: wrangler.toml's own settings are production's.
    '--var',
    'GATEWAY_MODE:local',
    '--var',
    `UPSTREAM_BASE_URL:${options.sandboxUrl}`,
    // Local subscribers (e.g. examples/receiver on 127.0.0.1) may receive webhooks.
    '--var',
    'ALLOW_LOCAL_SUBSCRIBERS:true',
    ...extra,
    // Any free port for the devtools inspector: with wrangler's fixed 9229, two stacks
    // started at the same moment both pick it and one fails to start.
    '--inspector-port',
    '0',
    '--show-interactive-dev-session=false',
    ...persistArgs(options.persistTo),
  ];
}

/**
 * Applies the D1 migrations to the local database.
 *
 * @param persistTo - the local state folder, as given to `wrangler dev`.
 * @throws {Error} with wrangler's output when it fails.
 */
export function applyLocalMigrations(persistTo: string | undefined): void {
  const result = spawnSync(
    WRANGLER,
    ['d1', 'migrations', 'apply', 'DB', '--local', ...persistArgs(persistTo)],
    { cwd: ROOT, env: QUIET_ENV, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  if (result.status !== 0) {
    throw new Error(
      `wrangler d1 migrations apply failed with status ${result.status}:\n${result.stdout}${result.stderr}`,
    );
  }
}

/**
 * Waits until the gateway's `/healthz` answers 2xx, polling every 250 ms.
 *
 * @param child - the wrangler dev process.
 * @param gatewayUrl - the gateway's base URL.
 * @param timeoutMs - how long to wait, in milliseconds.
 * @throws {Error} when wrangler dev exits first or the gateway does not answer in time.
 */
export async function waitForGateway(
  child: ChildProcess,
  gatewayUrl: string,
  timeoutMs: number,
): Promise<void> {
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

/** How long wrangler dev gets to stop (it stops workerd) before it is killed, in milliseconds. */
const GATEWAY_STOP_MS = 10_000;

/**
 * Stops wrangler dev and waits for it to exit, so the caller's own exit leaves the
 * gateway's port free; killed after {@link GATEWAY_STOP_MS}.
 *
 * @param child - the wrangler dev process.
 */
export async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), GATEWAY_STOP_MS);
  await exited;
  clearTimeout(timer);
}
