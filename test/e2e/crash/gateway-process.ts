/**
 * The gateway's `wrangler dev` for the crash test, run with the command of `npm start`
 * (scripts/gateway-dev.ts) in a process group of its own, so a crash is a SIGKILL of the
 * whole group: wrangler and its workerd children die at once, as in a power cut, with no
 * chance to flush anything.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { gatewayDevArgs, QUIET_ENV, ROOT, WRANGLER } from '../../../scripts/gateway-dev.ts';

/** The most of the gateway's output kept (its tail). */
const MAX_OUTPUT_CHARS = 2_000_000;

/** What {@link startGateway} needs. */
export interface GatewayOptions {
  readonly port: number;
  readonly sandboxUrl: string;
  /** The local state folder (`--persist-to`), kept across restarts. */
  readonly persistTo: string;
  /** The dotenv file with the local secrets. */
  readonly varsFile: string;
  /** More `NAME:value` settings. */
  readonly vars: readonly string[];
  /** How long the start may take, in milliseconds. */
  readonly timeoutMs: number;
}

/** A running gateway. */
export interface GatewayProcess {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILL to its process group, awaited. */
  kill(): Promise<void>;
  /** SIGTERM to its process group, awaited (the end of the test). */
  stop(): Promise<void>;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
    return Promise.resolve();
  }
  return exited;
}

/**
 * Starts `wrangler dev` for the gateway and waits until `/healthz` answers 200.
 *
 * @param options - port, upstream, state folder, secrets file, extra settings, time allowed.
 * @returns the running gateway.
 * @throws {Error} with its output when it exits or does not answer in time (killed then).
 */
export async function startGateway(options: GatewayOptions): Promise<GatewayProcess> {
  const host = '127.0.0.1';
  const child = spawn(
    WRANGLER,
    gatewayDevArgs({
      host,
      port: options.port,
      varsFile: options.varsFile,
      sandboxUrl: options.sandboxUrl,
      persistTo: options.persistTo,
      vars: options.vars,
    }),
    { cwd: ROOT, env: QUIET_ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Its own process group outlives the test runner unless killed: never leave it behind.
  const orphanGuard = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
  process.once('exit', orphanGuard);
  child.once('exit', () => process.off('exit', orphanGuard));
  let output = '';
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const url = `http://${host}:${options.port}`;
  const gateway: GatewayProcess = {
    url,
    output: () => output,
    kill: () => signalGroup(child, 'SIGKILL'),
    stop: () => signalGroup(child, 'SIGTERM'),
  };
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      if (response.ok) return gateway;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await gateway.kill();
  throw new Error(`the gateway did not answer within ${options.timeoutMs} ms:\n${output}`);
}
