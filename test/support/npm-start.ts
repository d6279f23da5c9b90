/**
 * `npm start`'s stack (scripts/start.ts) for the end-to-end tests: started on the ports
 * given, with the committed local defaults (`.dev.vars.example`) and local state of its
 * own in a temporary folder, and stopped with everything it started.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from './child-process.ts';

const root = join(import.meta.dirname, '..', '..');
/** The most of the stack's output kept (its tail), so a chatty run stays bounded. */
const MAX_OUTPUT_CHARS = 1_000_000;
/** What scripts/start.ts prints once everything answers. */
const READY = 'edgepay is running';

/** The loopback ports of one stack. */
export interface StackPorts {
  readonly gateway: number;
  readonly sandbox: number;
  readonly receiver: number;
}

/** Options of {@link startNpmStart}. */
export interface NpmStartOptions {
  /**
   * The local state folder (`EDGEPAY_PERSIST_TO`), owned by the caller and kept on stop, so
   * a second stack can start on the state of the first. @default a temporary folder of its
   * own, removed on stop
   */
  readonly persistTo?: string;
  /** More environment for `scripts/start.ts`, e.g. `EDGEPAY_CRON_INTERVAL_MS`. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * How the ports are given: as the `EDGEPAY_*_PORT` variables, or as the command line's
   * `--port`, `--sandbox-port` and `--receiver-port` (then `env` may set the variables too,
   * to check that the options win). @default 'variables'
   */
  readonly portsAs?: 'variables' | 'options';
}

/** A running stack. */
export interface NpmStartStack {
  /** `http://127.0.0.1:<gateway port>`. */
  readonly gatewayUrl: string;
  /** `http://127.0.0.1:<sandbox port>`. */
  readonly sandboxUrl: string;
  /** Everything the stack printed so far (stdout and stderr), the banner included. */
  output(): string;
  /** Stops the stack (SIGTERM, awaited) and removes its local state unless the caller gave it. */
  stop(): Promise<void>;
  /**
   * Stops it as a terminal's Ctrl-C does: SIGINT to its whole process group.
   *
   * @returns its exit code (`null` when a signal ended it).
   */
  interrupt(): Promise<number | null>;
}

/**
 * Starts `node scripts/start.ts` on `ports` (as variables, or as options) and waits for
 * its banner.
 *
 * @param ports - the gateway's, the sandbox's and the example receiver's ports.
 * @param timeoutMs - how long the start may take (wrangler dev's first start included).
 * @param options - a local state folder to start on and keep, more environment, how the
 *   ports are given.
 * @returns the stack, ready.
 * @throws {Error} with the stack's output when it exits or is not ready in time (it is
 *   stopped then).
 */
export async function startNpmStart(
  ports: StackPorts,
  timeoutMs = 90_000,
  options: NpmStartOptions = {},
): Promise<NpmStartStack> {
  const ownState = options.persistTo === undefined;
  const state = options.persistTo ?? mkdtempSync(join(tmpdir(), 'edgepay-e2e-'));
  const asOptions = options.portsAs === 'options';
  const args = asOptions
    ? ['--port', ports.gateway, '--sandbox-port', ports.sandbox, '--receiver-port', ports.receiver]
    : [];
  const variables = asOptions
    ? {}
    : {
        EDGEPAY_GATEWAY_PORT: String(ports.gateway),
        EDGEPAY_SANDBOX_PORT: String(ports.sandbox),
        EDGEPAY_RECEIVER_PORT: String(ports.receiver),
      };
  const child = spawn(process.execPath, [join(root, 'scripts', 'start.ts'), ...args.map(String)], {
    cwd: root,
    env: {
      ...process.env,
      ...options.env,
      ...variables,
      EDGEPAY_VARS_FILE: join(root, '.dev.vars.example'),
      EDGEPAY_PERSIST_TO: state,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, as a shell starts a command: `interrupt` signals the whole group.
    detached: true,
  });
  let output = '';
  const stop = async () => {
    await stopChild(child);
    if (ownState) rmSync(state, { recursive: true, force: true });
  };
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start not ready:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
      if (output.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${output}`));
    });
  });
  try {
    await ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    sandboxUrl: `http://127.0.0.1:${ports.sandbox}`,
    output: () => output,
    stop,
    interrupt: async () => {
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
      const code = await exited;
      if (ownState) rmSync(state, { recursive: true, force: true });
      return code;
    },
  };
}
